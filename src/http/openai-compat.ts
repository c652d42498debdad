import { AppError, type ErrorCode } from '../errors.js';
import type { OpenAiErrorBody } from '../api/openai.js';
import type { VoiceCatalog } from '../usecases/voices.js';

/** The neural voice OpenAI's names map to where it is installed (VOICES_DIR) and Kokoro is not. */
const PIPER_JOE = 'piper:en_US-joe-medium';
/** Kokoro's packs of OpenAI's names where installed (Kokoro-82M was given some of them), else the packs script/setup installs. */
const KOKORO_FEMALE = 'kokoro:af_heart';
const KOKORO_MALE = 'kokoro:am_michael';

/**
 * OpenAI's voice names and the local voices that suit them (gender and character), best first: the first one this
 * machine has wins. Kokoro, Piper and Festival are optional; every list ends with an eSpeak NG voice, which is always
 * there. Kokoro's voices come first; without them the male-sounding names go to the Piper voice first, and every name
 * falls back to it before eSpeak NG.
 */
export const OPENAI_VOICES: Readonly<Record<string, readonly string[]>> = {
  alloy: ['kokoro:af_alloy', KOKORO_FEMALE, 'festival:slt-hts', 'flite:slt', PIPER_JOE, 'espeak-ng:en-us+f3'],
  ash: [KOKORO_MALE, PIPER_JOE, 'flite:rms', 'espeak-ng:en-us'],
  ballad: ['kokoro:bm_george', KOKORO_MALE, PIPER_JOE, 'flite:awb', 'espeak-ng:en-gb-x-rp'],
  coral: [KOKORO_FEMALE, 'flite:slt', 'festival:slt-hts', PIPER_JOE, 'espeak-ng:en-us+f3'],
  echo: ['kokoro:am_echo', KOKORO_MALE, PIPER_JOE, 'flite:kal16', 'espeak-ng:en-us'],
  fable: ['kokoro:bm_fable', KOKORO_MALE, PIPER_JOE, 'flite:awb', 'espeak-ng:en-gb-x-rp'],
  nova: ['kokoro:af_nova', KOKORO_FEMALE, 'festival:slt-hts', 'flite:slt', PIPER_JOE, 'espeak-ng:en-us+f3'],
  onyx: ['kokoro:am_onyx', KOKORO_MALE, PIPER_JOE, 'flite:rms', 'espeak-ng:en-us'],
  sage: ['kokoro:bf_emma', KOKORO_FEMALE, 'festival:slt-hts', 'flite:slt', PIPER_JOE, 'espeak-ng:en-gb-x-rp+f3'],
  shimmer: [KOKORO_FEMALE, 'flite:slt', 'festival:slt-hts', PIPER_JOE, 'espeak-ng:en-us+f3'],
  verse: [KOKORO_MALE, PIPER_JOE, 'flite:kal16', 'espeak-ng:en-us'],
  marin: [KOKORO_FEMALE, 'festival:slt-hts', 'flite:slt', PIPER_JOE, 'espeak-ng:en-us+f3'],
  cedar: [KOKORO_MALE, PIPER_JOE, 'flite:rms', 'espeak-ng:en-us'],
};

/** The first installed of a name's voices in `table` (its keys in lower case); a voxreel voice id stands for itself. */
export function mappedVoice(engines: Pick<VoiceCatalog, 'findVoice'>, table: Readonly<Record<string, readonly string[]>>, requested: string): string | undefined {
  const preferences = table[requested.toLowerCase()];
  return preferences ? preferences.find((id) => engines.findVoice(id)) : engines.findVoice(requested)?.id;
}

/** An OpenAI voice name to the local voice it maps to here; a voxreel voice id stands for itself. */
export function resolveVoice(engines: Pick<VoiceCatalog, 'findVoice'>, requested: string): string {
  const found = mappedVoice(engines, OPENAI_VOICES, requested);
  if (found) return found;
  throw new AppError('UNKNOWN_VOICE', {
    field: 'voice',
    message: `Invalid value for voice: "${requested.slice(0, 100)}". Use one of ${Object.keys(OPENAI_VOICES).join(', ')}, or a voice id from GET /voices.`,
  });
}

/** OpenAI's codes where it has one for the same failure; ours in lower case otherwise. */
const OPENAI_CODES: Partial<Record<ErrorCode, string>> = {
  UNAUTHORIZED: 'invalid_api_key',
  RATE_LIMITED: 'rate_limit_exceeded',
  UNKNOWN_VOICE: 'invalid_value',
  NOT_FOUND: 'unknown_url',
};

/** Validation keywords (Ajv) to OpenAI's parameter error codes. */
const VALIDATION_CODES: Record<string, string> = {
  required: 'missing_required_parameter',
  additionalProperties: 'unknown_parameter',
  maxLength: 'string_above_max_length',
  type: 'invalid_type',
};

function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 429) return 'rate_limit_error';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

/** Our error in OpenAI's body; `thrown` is what was thrown, for the validation keyword. */
export function openAiErrorBody(error: AppError, thrown?: unknown): OpenAiErrorBody {
  const keyword = (thrown as { validation?: Array<{ keyword?: string }> } | undefined)?.validation?.[0]?.keyword;
  const code =
    error.code === 'VALIDATION_ERROR' ? (VALIDATION_CODES[keyword ?? ''] ?? 'invalid_value') : (OPENAI_CODES[error.code] ?? error.code.toLowerCase());
  return { error: { message: error.message, type: errorType(error.statusCode), param: error.field ?? null, code } };
}
