import { Type, type Static } from '@sinclair/typebox';
import { LexiconIds, NonBlankText, TextType } from './fields.js';

/** OpenAI's limit for `input`. */
export const MAX_SPEECH_INPUT = 4096;

/** What `model` accepts on /v1/audio/speech: OpenAI's names and ours, all the same local synthesis. */
export const SPEECH_MODELS = ['tts-1', 'tts-1-hd', 'gpt-4o-mini-tts', 'gpt-4o-mini-tts-2025-12-15', 'voxreel'] as const;

export const SpeechFormat = Type.Union(
  [Type.Literal('mp3'), Type.Literal('opus'), Type.Literal('aac'), Type.Literal('flac'), Type.Literal('wav'), Type.Literal('pcm')],
  {
    default: 'mp3',
    description:
      'All at 24 kHz mono: mp3 (64 kb/s), opus (Ogg Opus), aac (ADTS), flac, wav (16-bit), pcm (raw 16-bit little-endian). ' +
      'mp3, opus, aac and pcm are sent as they are encoded.',
  },
);
export type SpeechFormat = Static<typeof SpeechFormat>;

const SpeechVoiceName = Type.String({ minLength: 1, maxLength: 100, description: 'An OpenAI voice name (alloy, ash, …) or a voice id from GET /voices.' });

export const SpeechRequest = Type.Object(
  {
    model: Type.Union(
      SPEECH_MODELS.map((id) => Type.Literal(id)),
      { description: 'Any id from GET /v1/models; they all synthesize the same way.' },
    ),
    input: NonBlankText(MAX_SPEECH_INPUT),
    text_type: Type.Optional(TextType),
    voice: Type.Union([SpeechVoiceName, Type.Object({ id: SpeechVoiceName }, { additionalProperties: false })]),
    instructions: Type.Optional(Type.String({ maxLength: MAX_SPEECH_INPUT, description: 'Accepted and ignored: the local engines take no style instructions.' })),
    response_format: Type.Optional(SpeechFormat),
    speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4, default: 1, description: 'Playback speed; pitch is kept.' })),
    stream_format: Type.Optional(
      Type.Union([Type.Literal('audio'), Type.Literal('sse')], {
        default: 'audio',
        description: '`audio`: the bytes themselves; `sse`: server-sent events `speech.audio.delta` (base64) then `speech.audio.done`.',
      }),
    ),
    lexicons: Type.Optional(LexiconIds),
  },
  { additionalProperties: false },
);
export type SpeechRequest = Static<typeof SpeechRequest>;

export const ModelList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(
    Type.Object({
      id: Type.String(),
      object: Type.Literal('model'),
      created: Type.Integer({ description: 'Unix time.' }),
      owned_by: Type.String(),
    }),
  ),
});
export type ModelList = Static<typeof ModelList>;

/** The error body of the /v1 routes: OpenAI's. */
export const OpenAiErrorBody = Type.Object(
  {
    error: Type.Object({
      message: Type.String(),
      type: Type.String({ description: '`invalid_request_error`, `authentication_error`, `rate_limit_error` or `server_error`.' }),
      param: Type.Union([Type.String(), Type.Null()], { description: 'The request field at fault.' }),
      code: Type.Union([Type.String(), Type.Null()], { description: 'Stable machine-readable code (docs/api.md, Errors).' }),
    }),
  },
  { $id: 'OpenAiErrorBody' },
);
export type OpenAiErrorBody = Static<typeof OpenAiErrorBody>;
