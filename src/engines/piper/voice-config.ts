import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/** Piper's defaults for a config without `inference` (piper1-gpl, SynthesisConfig). */
const DEFAULT_SCALES = { noise_scale: 0.667, length_scale: 1, noise_w: 0.8 };

/** The parts of a Piper voice's `<voice>.onnx.json` that voxreel reads; the rest is ignored. */
export const PiperVoiceConfig = Type.Object({
  audio: Type.Object({
    sample_rate: Type.Integer({ minimum: 8000, maximum: 192_000 }),
    quality: Type.Optional(Type.String()),
  }),
  espeak: Type.Object({ voice: Type.String({ minLength: 1, maxLength: 100 }) }),
  inference: Type.Optional(
    Type.Object({
      noise_scale: Type.Number({ minimum: 0 }),
      length_scale: Type.Number({ exclusiveMinimum: 0 }),
      noise_w: Type.Number({ minimum: 0 }),
    }),
  ),
  /** Only eSpeak phonemes are supported (Piper's `text` and `pinyin` voices are not). */
  phoneme_type: Type.Optional(Type.Literal('espeak')),
  phoneme_id_map: Type.Record(Type.String(), Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1 })),
  num_speakers: Type.Integer({ minimum: 1 }),
  speaker_id_map: Type.Optional(Type.Record(Type.String(), Type.Integer({ minimum: 0 }))),
  language: Type.Optional(Type.Object({ code: Type.String({ minLength: 2 }) })),
  dataset: Type.Optional(Type.String()),
});
export type PiperVoiceConfig = Static<typeof PiperVoiceConfig>;

/** Ids every Piper voice maps its sentence markers to. */
export const PAD = '_';
export const BOS = '^';
export const EOS = '$';

/** Checks a parsed config; throws an Error naming the first problem. */
export function parseVoiceConfig(json: unknown): PiperVoiceConfig {
  const problem = Value.Errors(PiperVoiceConfig, json).First();
  if (problem) throw new Error(`${problem.path || '/'}: ${problem.message}`);
  const config = json as PiperVoiceConfig;
  for (const marker of [PAD, BOS, EOS]) {
    if (!config.phoneme_id_map[marker]) throw new Error(`/phoneme_id_map has no ${JSON.stringify(marker)}`);
  }
  return config;
}

export function scalesOf(config: PiperVoiceConfig): { noise: number; length: number; noiseW: number } {
  const { noise_scale, length_scale, noise_w } = config.inference ?? DEFAULT_SCALES;
  return { noise: noise_scale, length: length_scale, noiseW: noise_w };
}
