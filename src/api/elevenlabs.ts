import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { MAX_REQUEST_VOICES } from '../engines/voice.js';
import { MAX_SEGMENTS, NonBlankText } from './fields.js';

/** ElevenLabs' limit for `text` on its multilingual model. */
export const MAX_ELEVENLABS_TEXT = 10_000;

/** The models GET /v1/models lists; `model_id` takes any string, as every model synthesizes the same way here. */
export const ELEVENLABS_MODELS = ['eleven_multilingual_v2', 'eleven_flash_v2_5'] as const;

/** ElevenLabs' `output_format` values: codec, sample rate, and (mp3, opus) bitrate in kb/s. */
export const ELEVENLABS_FORMATS = [
  'mp3_22050_32',
  'mp3_24000_48',
  'mp3_44100_32',
  'mp3_44100_64',
  'mp3_44100_96',
  'mp3_44100_128',
  'mp3_44100_192',
  'opus_48000_32',
  'opus_48000_64',
  'opus_48000_96',
  'opus_48000_128',
  'opus_48000_192',
  'pcm_8000',
  'pcm_16000',
  'pcm_22050',
  'pcm_24000',
  'pcm_32000',
  'pcm_44100',
  'pcm_48000',
  'wav_8000',
  'wav_16000',
  'wav_22050',
  'wav_24000',
  'wav_32000',
  'wav_44100',
  'wav_48000',
  'ulaw_8000',
  'alaw_8000',
] as const;
export type ElevenLabsFormat = (typeof ELEVENLABS_FORMATS)[number];

/** Optional, and null taken as left out (ElevenLabs' other clients send null for fields they do not set). */
const Omissible = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const Unit = (description: string) => Omissible(Type.Number({ minimum: 0, maximum: 1, description }));
const Ignored = 'Accepted and ignored.';

export const ElevenLabsVoiceSettings = Type.Object(
  {
    stability: Unit(Ignored),
    similarity_boost: Unit(Ignored),
    style: Unit(Ignored),
    use_speaker_boost: Omissible(Type.Boolean({ description: Ignored })),
    speed: Omissible(Type.Number({ minimum: 0.7, maximum: 1.2, description: 'Speaking rate, 0.7 to 1.2 as ElevenLabs allows; pitch is kept. Default 1.' })),
  },
  { additionalProperties: true },
);
export type ElevenLabsVoiceSettings = Static<typeof ElevenLabsVoiceSettings>;

/** The body of the text-to-speech routes: what voxreel uses, and ElevenLabs' other fields, accepted and ignored. */
export const ElevenLabsSpeechRequest = Type.Object(
  {
    text: NonBlankText(MAX_ELEVENLABS_TEXT),
    model_id: Omissible(Type.String({ maxLength: 100, description: 'Accepted and ignored: every model synthesizes the same way here.' })),
    voice_settings: Omissible(ElevenLabsVoiceSettings),
    language_code: Omissible(Type.String({ maxLength: 35, description: "Accepted and ignored: the voice's language is used." })),
    seed: Omissible(Type.Integer({ description: 'Accepted and ignored: synthesis is deterministic here.' })),
    previous_text: Omissible(Type.String({ maxLength: MAX_ELEVENLABS_TEXT, description: Ignored })),
    next_text: Omissible(Type.String({ maxLength: MAX_ELEVENLABS_TEXT, description: Ignored })),
    apply_text_normalization: Omissible(
      Type.Union([Type.Literal('auto'), Type.Literal('on'), Type.Literal('off')], { description: 'Accepted and ignored: English text is always normalized.' }),
    ),
  },
  { additionalProperties: true, description: "ElevenLabs' other fields (pronunciation dictionaries, request ids, …) are accepted and ignored." },
);
export type ElevenLabsSpeechRequest = Static<typeof ElevenLabsSpeechRequest>;

/** ElevenLabs' text-to-dialogue: turns, each with its voice. */
export const ElevenLabsDialogueRequest = Type.Object(
  {
    inputs: Type.Array(
      Type.Object(
        {
          text: NonBlankText(MAX_ELEVENLABS_TEXT, 'What this turn says.'),
          voice_id: Type.String({ minLength: 1, maxLength: 100, description: 'A voice id from GET /v1/voices: an ElevenLabs premade voice or a voxreel id.' }),
        },
        { additionalProperties: true },
      ),
      { minItems: 1, maxItems: MAX_SEGMENTS, description: `The turns, said in order, each in its voice (at most ${MAX_REQUEST_VOICES} different voices, ${MAX_ELEVENLABS_TEXT} characters in all).` },
    ),
    model_id: Omissible(Type.String({ maxLength: 100, description: 'Accepted and ignored: every model synthesizes the same way here.' })),
    language_code: Omissible(Type.String({ maxLength: 35, description: "Accepted and ignored: each voice's language is used." })),
    seed: Omissible(Type.Integer({ description: 'Accepted and ignored: synthesis is deterministic here.' })),
  },
  { additionalProperties: true, description: "ElevenLabs' other fields (settings, pronunciation dictionaries, request ids, …) are accepted and ignored." },
);
export type ElevenLabsDialogueRequest = Static<typeof ElevenLabsDialogueRequest>;

export const ElevenLabsSpeechQuery = Type.Object(
  {
    output_format: Type.Optional(
      Type.Union(
        ELEVENLABS_FORMATS.map((format) => Type.Literal(format)),
        {
          default: 'mp3_44100_128',
          description: 'codec_rate[_kbps]: the codec and rate as named; mp3 at 64 kb/s and opus at 48 kb/s whatever the bitrate named (docs/api.md).',
        },
      ),
    ),
  },
  { additionalProperties: true, description: 'Other parameters (enable_logging, optimize_streaming_latency) are accepted and ignored.' },
);
export type ElevenLabsSpeechQuery = Static<typeof ElevenLabsSpeechQuery>;

export const ElevenLabsVoiceParams = Type.Object(
  { voice_id: Type.String({ minLength: 1, maxLength: 100, description: 'A voice id from GET /v1/voices: an ElevenLabs premade voice or a voxreel id (URL-encoded).' }) },
  { additionalProperties: false },
);
export type ElevenLabsVoiceParams = Static<typeof ElevenLabsVoiceParams>;

export const CharacterAlignment = Type.Object({
  characters: Type.Array(Type.String()),
  character_start_times_seconds: Type.Array(Type.Number()),
  character_end_times_seconds: Type.Array(Type.Number()),
});

export const ElevenLabsTimedAudio = Type.Object({
  audio_base64: Type.String({ description: 'The audio, base64.' }),
  alignment: Type.Union([CharacterAlignment, Type.Null()], { description: 'Every character of the text with when it is said.' }),
  normalized_alignment: Type.Union([CharacterAlignment, Type.Null()], { description: 'The same as `alignment`: voxreel times the text as written.' }),
});
export type ElevenLabsTimedAudio = Static<typeof ElevenLabsTimedAudio>;

export const ElevenLabsVoiceSegment = Type.Object({
  voice_id: Type.String({ description: 'The voice of this turn, as the request named it.' }),
  start_time_seconds: Type.Number({ description: 'When its first character is said.' }),
  end_time_seconds: Type.Number({ description: 'When its last character has been said.' }),
  character_start_index: Type.Integer({ description: 'Its first character in the characters of the whole dialogue (code points, as `alignment` counts them).' }),
  character_end_index: Type.Integer({ description: 'Past its last character (exclusive).' }),
  dialogue_input_index: Type.Integer({ description: 'The turn of `inputs` it says.' }),
});

export const ElevenLabsTimedDialogue = Type.Object({
  ...ElevenLabsTimedAudio.properties,
  voice_segments: Type.Array(ElevenLabsVoiceSegment, {
    description: "Each turn's stretch of the audio and of the characters: the turns' texts as read, white space collapsed, one a line. In a stream, each line's share of the turns it holds.",
  }),
});

export const ElevenLabsVoiceObject = Type.Object({
  voice_id: Type.String(),
  name: Type.String(),
  category: Type.String({ description: '`premade`: an ElevenLabs voice name mapped to a local voice; `generated`: a voxreel voice.' }),
  description: Type.String(),
  labels: Type.Record(Type.String(), Type.String(), { description: 'language, gender, accent, engine.' }),
  preview_url: Type.String(),
  settings: Type.Object({ stability: Type.Number(), similarity_boost: Type.Number(), style: Type.Number(), use_speaker_boost: Type.Boolean(), speed: Type.Number() }),
  available_for_tiers: Type.Array(Type.String()),
  high_quality_base_model_ids: Type.Array(Type.String()),
});
export type ElevenLabsVoiceObject = Static<typeof ElevenLabsVoiceObject>;

export const ElevenLabsVoiceList = Type.Object({ voices: Type.Array(ElevenLabsVoiceObject) });
export type ElevenLabsVoiceList = Static<typeof ElevenLabsVoiceList>;

export const ElevenLabsModel = Type.Object({
  model_id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  can_do_text_to_speech: Type.Boolean(),
  can_do_voice_conversion: Type.Boolean(),
  can_use_style: Type.Boolean(),
  can_use_speaker_boost: Type.Boolean(),
  maximum_text_length_per_request: Type.Integer(),
  languages: Type.Array(Type.Object({ language_id: Type.String(), name: Type.String() })),
});
export const ElevenLabsModelList = Type.Array(ElevenLabsModel);
export type ElevenLabsModelList = Static<typeof ElevenLabsModelList>;

/** ElevenLabs' error body: `{ detail: { status, message } }`, or FastAPI's list of issues for a 422 on a field. */
export const ElevenLabsErrorBody = Type.Object(
  {
    detail: Type.Union([
      Type.Object({ status: Type.String({ description: 'A stable code: voice_not_found, invalid_api_key, or ours in lower case.' }), message: Type.String() }),
      Type.Array(Type.Object({ loc: Type.Array(Type.String()), msg: Type.String(), type: Type.String() })),
    ]),
  },
  { $id: 'ElevenLabsErrorBody' },
);
export type ElevenLabsErrorBody = Static<typeof ElevenLabsErrorBody>;
