import { Type, type Static } from '@sinclair/typebox';

export const MAX_TTS_TEXT = 5000;

export const Voice = Type.Object(
  {
    id: Type.String({ description: 'Stable id: `<engine>:<voice>`, e.g. `espeak-ng:en-us`, `flite:slt`.' }),
    name: Type.String({ description: 'Display name.' }),
    language: Type.String({ description: 'BCP-47 language tag, e.g. `en-US`.' }),
    gender: Type.Union([Type.Literal('female'), Type.Literal('male'), Type.Null()], {
      description: 'Gender of the voice where the engine states it, else null.',
    }),
    engine: Type.Union([Type.Literal('espeak-ng'), Type.Literal('flite'), Type.Literal('festival')]),
    sampleRate: Type.Integer({ description: 'Native sample rate in Hz.' }),
    wordTimings: Type.Boolean({ description: 'Whether the engine reports when each word is spoken.' }),
  },
  { $id: 'Voice', additionalProperties: false },
);
export type Voice = Static<typeof Voice>;

export const VoiceList = Type.Object({
  status: Type.Literal('success'),
  voices: Type.Array(Voice),
});
export type VoiceList = Static<typeof VoiceList>;

export const VoicesQuery = Type.Object(
  {
    language: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 35,
        description: 'BCP-47 prefix, case-insensitive: `en` matches en-US and en-GB, `en-GB` only en-GB.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type VoicesQuery = Static<typeof VoicesQuery>;

const NonBlankText = (maxLength: number) =>
  Type.String({ minLength: 1, maxLength, pattern: '\\S', description: `Text to speak, 1 to ${maxLength} characters.` });

export const AudioFormat = Type.Union([Type.Literal('mp3'), Type.Literal('wav'), Type.Literal('ogg')], {
  default: 'mp3',
  description: 'mp3 (MPEG-1/2 Layer III), wav (16-bit PCM), ogg (Ogg Vorbis).',
});
export type AudioFormat = Static<typeof AudioFormat>;

export const TtsRequest = Type.Object(
  {
    text: NonBlankText(MAX_TTS_TEXT),
    voice: Type.String({ minLength: 1, maxLength: 100, description: 'A voice id from GET /voices.' }),
    format: Type.Optional(AudioFormat),
    speed: Type.Optional(
      Type.Number({ minimum: 0.5, maximum: 2, default: 1, description: 'Playback speed; pitch is kept.' }),
    ),
  },
  { additionalProperties: false },
);
export type TtsRequest = Static<typeof TtsRequest>;

export const TtsResponse = Type.Object({
  status: Type.Literal('success'),
  url: Type.String({ description: '`<CDN_URL>/audio/<name>.<format>`' }),
  duration: Type.Number({ description: 'Length of the file in seconds.' }),
  cost: Type.Number({ description: 'Price of the request in the currency of `currency`.' }),
  currency: Type.String({ description: 'ISO 4217 code of `cost`.' }),
  format: AudioFormat,
  voice: Type.String(),
  characters: Type.Integer({ description: 'Characters billed (the length of `text`).' }),
  bytes: Type.Integer({ description: 'Size of the file.' }),
});
export type TtsResponse = Static<typeof TtsResponse>;

export const ErrorBody = Type.Object(
  {
    status: Type.Literal('error'),
    error: Type.Object({
      code: Type.String({ description: 'Stable machine-readable code, see README.' }),
      message: Type.String(),
      field: Type.Optional(Type.String({ description: 'The request field at fault, for validation errors.' })),
      requestId: Type.String(),
    }),
  },
  { $id: 'ErrorBody' },
);
export type ErrorBody = Static<typeof ErrorBody>;
