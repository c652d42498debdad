import { Type, type Static } from '@sinclair/typebox';
import type { Voice as DomainVoice } from '../engines/voice.js';

/** What an engine says of a voice (engines/voice.ts `Voice`), as the contract describes it. */
export const EngineVoice = Type.Object(
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
  { additionalProperties: false },
);

// The schema and the engines' type say the same: a field added to one and not the other fails to type-check.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const schemaMatchesEngines: Same<Static<typeof EngineVoice>, DomainVoice> = true;
void schemaMatchesEngines;

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
