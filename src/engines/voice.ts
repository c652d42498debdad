import { Type, type Static } from '@sinclair/typebox';

/** A voice as GET /voices lists it and every engine describes its own. */
export const Voice = Type.Object(
  {
    id: Type.String({ description: 'Stable id: `<engine>:<voice>`, e.g. `espeak-ng:en-us`, `flite:slt`, `piper:en_US-joe-medium`.' }),
    name: Type.String({ description: 'Display name.' }),
    language: Type.String({ description: 'BCP-47 language tag as people write it, e.g. `en-US`, `zh-CN` (Mandarin), `zh-HK` (Cantonese).' }),
    engineLanguage: Type.Optional(
      Type.String({ description: "The engine's own tag where it differs from `language`, e.g. eSpeak NG's `cmn` for `zh-CN`, `yue` for `zh-HK`." }),
    ),
    gender: Type.Union([Type.Literal('female'), Type.Literal('male'), Type.Null()], {
      description: 'Gender of the voice where the engine states it, else null.',
    }),
    engine: Type.String({ description: 'The engine that speaks it: the part of `id` before the colon (kokoro, piper, rhvoice, festival, flite or espeak-ng).' }),
    sampleRate: Type.Integer({ description: 'Native sample rate in Hz.' }),
    wordTimings: Type.Boolean({ description: 'Whether the engine reports when each word is spoken.' }),
    phonemes: Type.Boolean({
      description: 'Whether the voice takes words as IPA: SSML `<phoneme alphabet="ipa">` and lexicon phonemes. Others refuse `<phoneme>` (write the word as it sounds, or use `<sub>` or a lexicon alias).',
    }),
    recommended: Type.Optional(
      Type.Boolean({ description: 'The voice to choose for its language: the most natural one installed (one per language tag).' }),
    ),
    naturalSpeed: Type.Optional(
      Type.Boolean({ description: 'Whether `speed` is spoken by the voice itself, at a natural rhythm, rather than by a tempo filter.' }),
    ),
    grade: Type.Optional(
      Type.String({ description: "A voice's overall grade as its publisher gives it, `A` (best) to `F` with `+` and `-` (Kokoro's, from hexgrad's VOICES.md)." }),
    ),
    quality: Type.Optional(
      Type.Union([Type.Literal('x_low'), Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')], {
        description: "A neural voice's model size and sample rate, as its publisher grades it (Piper).",
      }),
    ),
  },
  { $id: 'Voice', additionalProperties: false },
);
export type Voice = Static<typeof Voice>;
