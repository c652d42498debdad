import { Type, type Static } from '@sinclair/typebox';
import { Voice as EngineVoice } from '../engines/voice.js';

/** A voice as GET /voices lists it: the engine's description, and where to hear it. */
export const Voice = Type.Composite(
  [
    EngineVoice,
    Type.Object({
      preview_url: Type.String({
        description: 'A short MP3 of the voice saying a sentence in its language (GET /voices/{id}/preview), absolute, on the host the request was sent to.',
      }),
    }),
  ],
  { $id: 'Voice', additionalProperties: false },
);
export type Voice = Static<typeof Voice>;

export const VoiceList = Type.Object({
  status: Type.Literal('success'),
  voices: Type.Array(Voice),
  unavailable: Type.Optional(
    Type.Array(Type.Object({ engine: Type.String(), reason: Type.String() }), {
      description: 'Engines installed here that could not start: their voices are missing above until a later try starts them (see /readyz).',
    }),
  ),
});
export type VoiceList = Static<typeof VoiceList>;

export const VoicesQuery = Type.Object(
  {
    language: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 35,
        description:
          'BCP-47 tag, case-insensitive, as a prefix (`en` matches en-US and en-GB, `en-GB` only en-GB) and across macrolanguages ' +
          'and their members (`zh` finds Mandarin and Cantonese, `zh-CN` and `cmn` Mandarin, `zh-HK` and `yue` Cantonese).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type VoicesQuery = Static<typeof VoicesQuery>;

export const VoiceParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 100, description: 'A voice id from GET /voices (URL-encoded: `espeak-ng%3Aen-us`).' }) },
  { additionalProperties: false },
);
export type VoiceParams = Static<typeof VoiceParams>;
