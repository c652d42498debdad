import { AppError, type ErrorCode } from '../errors.js';
import type { VoiceCatalog } from '../usecases/voices.js';
import type { AudioEncoding, Voice } from '../usecases/vocabulary.js';
import { mappedVoice, OPENAI_VOICES } from './openai-compat.js';
import type { ElevenLabsErrorBody, ElevenLabsFormat, ElevenLabsVoiceObject } from '../api/elevenlabs.js';

/** An ElevenLabs premade voice, and the OpenAI voice name whose local voices suit it (gender and accent). */
interface PremadeVoice {
  voice_id: string;
  name: string;
  gender: 'female' | 'male' | 'neutral';
  accent: string;
  like: keyof typeof OPENAI_VOICES & string;
}

/** ElevenLabs' premade voices with their published ids; each speaks with the local voice its OpenAI look-alike maps to. */
export const ELEVENLABS_VOICES: readonly PremadeVoice[] = [
  { voice_id: '21m00Tcm4TlvDq8ikWAM', name: 'Rachel', gender: 'female', accent: 'american', like: 'nova' },
  { voice_id: 'EXAVITQu4vr4xnSDxMaL', name: 'Sarah', gender: 'female', accent: 'american', like: 'shimmer' },
  { voice_id: 'AZnzlk1XvdvUeBnXmlld', name: 'Domi', gender: 'female', accent: 'american', like: 'coral' },
  { voice_id: 'MF3mGyEYCl7XYWbV9V6O', name: 'Elli', gender: 'female', accent: 'american', like: 'alloy' },
  { voice_id: 'cgSgspJ2msm6clMCkdW9', name: 'Jessica', gender: 'female', accent: 'american', like: 'nova' },
  { voice_id: 'FGY2WhTYpPnrIDTdsKH5', name: 'Laura', gender: 'female', accent: 'american', like: 'shimmer' },
  { voice_id: '9BWtsMINqrJLrRacOk9x', name: 'Aria', gender: 'female', accent: 'american', like: 'alloy' },
  { voice_id: 'XrExE9yKIg1WjnnlVkGX', name: 'Matilda', gender: 'female', accent: 'american', like: 'coral' },
  { voice_id: 'XB0fDUnXU5powFXDhCwa', name: 'Charlotte', gender: 'female', accent: 'swedish', like: 'sage' },
  { voice_id: 'Xb7hH8MSUJpSbSDYk0k2', name: 'Alice', gender: 'female', accent: 'british', like: 'sage' },
  { voice_id: 'pFZP5JQG7iQjIQuC4Bku', name: 'Lily', gender: 'female', accent: 'british', like: 'sage' },
  { voice_id: 'SAz9YHcvj6GT2YYXdXww', name: 'River', gender: 'neutral', accent: 'american', like: 'alloy' },
  { voice_id: 'JBFqnCBsd6RMkjVDRZzb', name: 'George', gender: 'male', accent: 'british', like: 'fable' },
  { voice_id: 'onwK4e9ZLuTAKqWW03F9', name: 'Daniel', gender: 'male', accent: 'british', like: 'ballad' },
  { voice_id: 'N2lVS1w4EtoT3dr4eOWO', name: 'Callum', gender: 'male', accent: 'transatlantic', like: 'fable' },
  { voice_id: 'pNInz6obpgDQGcFmaJgB', name: 'Adam', gender: 'male', accent: 'american', like: 'onyx' },
  { voice_id: 'ErXwobaYiN019PkySvjV', name: 'Antoni', gender: 'male', accent: 'american', like: 'echo' },
  { voice_id: 'TxGEqnHWrfWFTfGW9XjX', name: 'Josh', gender: 'male', accent: 'american', like: 'verse' },
  { voice_id: 'VR6AewLTigWG4xSOukaG', name: 'Arnold', gender: 'male', accent: 'american', like: 'ash' },
  { voice_id: 'yoZ06aMxZJJ28mfd3POQ', name: 'Sam', gender: 'male', accent: 'american', like: 'echo' },
  { voice_id: 'nPczCjzI2devNBz1zQrb', name: 'Brian', gender: 'male', accent: 'american', like: 'onyx' },
  { voice_id: 'pqHfZKP75CvOlQylNhV4', name: 'Bill', gender: 'male', accent: 'american', like: 'ash' },
  { voice_id: 'iP95p4xoKVk53GoZ742B', name: 'Chris', gender: 'male', accent: 'american', like: 'verse' },
  { voice_id: 'cjVigY5qzO86Huf0OWal', name: 'Eric', gender: 'male', accent: 'american', like: 'echo' },
  { voice_id: 'bIHbv24MWmeRgasZH58o', name: 'Will', gender: 'male', accent: 'american', like: 'verse' },
  { voice_id: 'CwhRBWXzGAHq8TQ4Fs17', name: 'Roger', gender: 'male', accent: 'american', like: 'cedar' },
  { voice_id: 'TX3LPaxmHKxFdv7VOQHJ', name: 'Liam', gender: 'male', accent: 'american', like: 'echo' },
  { voice_id: 'IKne3meq5aSn9XLyUdCD', name: 'Charlie', gender: 'male', accent: 'australian', like: 'ash' },
];

/** Premade voices by id and by name, in lower case, to their local voices (as mappedVoice reads a table). */
const PREMADE_TABLE: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  ELEVENLABS_VOICES.flatMap((voice) => {
    const local = OPENAI_VOICES[voice.like] ?? [];
    return [
      [voice.voice_id.toLowerCase(), local],
      [voice.name.toLowerCase(), local],
    ];
  }),
);

/** An ElevenLabs voice id or name to the local voice it maps to; a voxreel voice id stands for itself. */
export function resolveElevenLabsVoice(engines: Pick<VoiceCatalog, 'findVoice'>, requested: string, field = 'voice_id'): string {
  const found = mappedVoice(engines, PREMADE_TABLE, requested);
  if (found) return found;
  throw unknownVoice(requested, field);
}

function unknownVoice(requested: string, field: string): AppError {
  return new AppError('UNKNOWN_VOICE', {
    field,
    message: `A voice with the voice_id "${requested.slice(0, 100)}" was not found; GET /v1/voices lists them.`,
  });
}

/** The codecs of `output_format` (its first part) to voxreel's encodings. */
export const ELEVENLABS_ENCODINGS: Readonly<Record<string, AudioEncoding>> = { mp3: 'mp3', opus: 'opus', pcm: 'pcm', wav: 'wav', ulaw: 'ulaw', alaw: 'alaw' };

/** An `output_format` as voxreel encodes it: the codec and rate named (the bitrate named is not followed). */
export function outputFormat(format: ElevenLabsFormat): { encoding: AudioEncoding; sampleRate: number } {
  const [codec = '', rate = ''] = format.split('_');
  const encoding = ELEVENLABS_ENCODINGS[codec];
  if (!encoding) throw new AppError('VALIDATION_ERROR', { field: 'output_format', message: `output_format "${format}" is not supported.` });
  return { encoding, sampleRate: Number(rate) };
}

/** What a voice object says of settings: ElevenLabs' defaults (only `speed` is followed here). */
const DEFAULT_SETTINGS = { stability: 0.5, similarity_boost: 0.75, style: 0, use_speaker_boost: true, speed: 1 };
const MODEL_IDS = ['eleven_multilingual_v2', 'eleven_flash_v2_5'];

const ACCENTS: Record<string, string> = { US: 'american', GB: 'british', AU: 'australian', IE: 'irish', IN: 'indian', CA: 'canadian' };

function labelsOf(voice: Voice): Record<string, string> {
  const [language = voice.language, region] = voice.language.split('-');
  return {
    language: language.toLowerCase(),
    locale: voice.language,
    ...(voice.gender ? { gender: voice.gender } : {}),
    ...(region && ACCENTS[region.toUpperCase()] ? { accent: ACCENTS[region.toUpperCase()] as string } : {}),
    engine: voice.engine,
  };
}

function voiceObject(fields: Pick<ElevenLabsVoiceObject, 'voice_id' | 'name' | 'category' | 'description' | 'labels'>, previewUrl: string): ElevenLabsVoiceObject {
  return { ...fields, preview_url: previewUrl, settings: DEFAULT_SETTINGS, available_for_tiers: [], high_quality_base_model_ids: MODEL_IDS };
}

type VoiceSource = Pick<VoiceCatalog, 'findVoice' | 'listVoices'>;
/** The URL of a local voice's preview. */
type PreviewUrl = (voiceId: string) => string;

function premadeObject(engines: VoiceSource, voice: PremadeVoice, preview: PreviewUrl): ElevenLabsVoiceObject | undefined {
  const local = engines.findVoice(mappedVoice(engines, PREMADE_TABLE, voice.voice_id) ?? '');
  if (!local) return undefined;
  const labels = { ...labelsOf(local), gender: voice.gender, accent: voice.accent, voxreel_voice: local.id };
  const description = `ElevenLabs' ${voice.name}, spoken here by ${local.name} (${local.id}).`;
  return voiceObject({ voice_id: voice.voice_id, name: voice.name, category: 'premade', description, labels }, preview(local.id));
}

function localObject(voice: Voice, preview: PreviewUrl): ElevenLabsVoiceObject {
  const description = `voxreel's ${voice.engine} voice ${voice.name}.`;
  return voiceObject({ voice_id: voice.id, name: voice.name, category: 'generated', description, labels: labelsOf(voice) }, preview(voice.id));
}

/** The premade voices (each with its local voice) then every local voice, as GET /v1/voices lists them. */
export function elevenLabsVoices(engines: VoiceSource, preview: PreviewUrl): ElevenLabsVoiceObject[] {
  const premade = ELEVENLABS_VOICES.flatMap((voice) => premadeObject(engines, voice, preview) ?? []);
  return [...premade, ...engines.listVoices().map((voice) => localObject(voice, preview))];
}

/** One voice as GET /v1/voices lists it: a premade voice by id or name, or a local voice by its id. */
export function elevenLabsVoice(engines: VoiceSource, requested: string, preview: PreviewUrl): ElevenLabsVoiceObject {
  const wanted = requested.toLowerCase();
  const premade = ELEVENLABS_VOICES.find((voice) => voice.voice_id.toLowerCase() === wanted || voice.name.toLowerCase() === wanted);
  const local = premade ? undefined : engines.findVoice(requested);
  const found = premade ? premadeObject(engines, premade, preview) : local && localObject(local, preview);
  if (found) return found;
  throw unknownVoice(requested, 'voice_id');
}

/** ElevenLabs' `status` codes where it has one for the same failure; ours in lower case otherwise. */
const ELEVENLABS_CODES: Partial<Record<ErrorCode, string>> = {
  UNAUTHORIZED: 'invalid_api_key',
  UNKNOWN_VOICE: 'voice_not_found',
  RATE_LIMITED: 'too_many_concurrent_requests',
};

/** Validation keywords (Ajv) to the error types of ElevenLabs' validator (pydantic). */
const VALIDATION_TYPES: Record<string, string> = {
  required: 'missing',
  maxLength: 'string_too_long',
  minLength: 'string_too_short',
  pattern: 'string_too_short',
  anyOf: 'enum',
  const: 'enum',
  enum: 'enum',
  maximum: 'less_than_equal',
  minimum: 'greater_than_equal',
  type: 'type_error',
};

const isFieldError = (error: AppError) => error.code === 'VALIDATION_ERROR' || error.code === 'INVALID_JSON';

/** ElevenLabs answers 422 to a field it cannot take and 404 to a voice it does not have; otherwise our status. */
export function elevenLabsStatus(error: AppError): number {
  if (isFieldError(error)) return 422;
  return error.code === 'UNKNOWN_VOICE' ? 404 : error.statusCode;
}

/** Our error in ElevenLabs' body; `thrown` is what was thrown, for the validation keyword and the part of the request at fault. */
export function elevenLabsErrorBody(error: AppError, thrown?: unknown): ElevenLabsErrorBody {
  if (isFieldError(error)) {
    const validation = thrown as { validation?: Array<{ keyword?: string }>; validationContext?: string } | undefined;
    const keyword = validation?.validation?.[0]?.keyword ?? '';
    const type = error.code === 'INVALID_JSON' ? 'json_invalid' : (VALIDATION_TYPES[keyword] ?? 'value_error');
    const where = validation?.validationContext ?? (error.field === 'output_format' ? 'query' : 'body');
    return { detail: [{ loc: [where === 'querystring' ? 'query' : where, ...(error.field ? error.field.split('.') : [])], msg: error.message, type }] };
  }
  return { detail: { status: ELEVENLABS_CODES[error.code] ?? error.code.toLowerCase(), message: error.message } };
}
