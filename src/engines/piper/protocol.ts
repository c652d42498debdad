/** Jobs and results between PiperEngine and piper-host.ts. */
import type { OnnxRuntimeInfo } from '../onnx/runtime.js';
import type { PhonemeSpan } from '../types.js';

/** Everything a host needs to load and drive one model; the parent has read and checked the voice's config. */
export interface PiperModelSpec {
  /** Absolute path of the `.onnx` file; a host keeps one session per path. */
  modelPath: string;
  /** The tensor with each id's frame count (see onnx-durations.ts), or null: no word timings. */
  durations: { name: string; isOutput: boolean } | null;
  /** What eSpeak NG's set_voice() takes for the phonemes, e.g. `en-us`. */
  espeakVoice: string;
  sampleRate: number;
  phonemeIds: Record<string, number[]>;
  /** The config's inference scales: noise, length (1 / speed), noise width. */
  scales: { noise: number; length: number; noiseW: number };
  multiSpeaker: boolean;
}

export type PiperJob =
  /**
   * `voice`: the model's path. `model` comes with a process's first job for that voice only (see engine.ts); the
   * host keeps it. `ticket`: the engine's number for the job, which `cancel` names.
   */
  | { kind: 'synthesize'; ticket: number; voice: string; model?: PiperModelSpec; speakerId: number; text: string; lengthScale: number; phonemes?: PhonemeSpan[] }
  /** The job was given up: stop it before its next inference. */
  | { kind: 'cancel'; ticket: number }
  /** Answered from the host's event loop at once: also how the engine tells a stuck host from a busy one. */
  | { kind: 'stats' };

/** A word eSpeak NG spoke: where it starts in the text (UTF-16), and the samples of its phonemes. */
export interface SpokenWordSpan {
  textOffset: number;
  start: number;
  end: number;
}

/** The eSpeak NG build that phonemizes (phonemizer.ts): the native library, or the WebAssembly one and why. */
export interface PhonemesInfo {
  build: 'native' | 'webassembly';
  fallback: string | null;
}

export type PiperResult =
  | { kind: 'speech'; samples: Int16Array; sampleRate: number; words: SpokenWordSpan[] | null }
  /** `loads`: models this process has loaded, counting each again after it was dropped. `onnxruntime`: what runs them. */
  | { kind: 'stats'; pid: number; loads: number; models: string[]; rssBytes: number; onnxruntime: OnnxRuntimeInfo; phonemes: PhonemesInfo }
  | { kind: 'cancelled' };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isSpan(value: unknown): value is SpokenWordSpan {
  return (
    isRecord(value) &&
    Number.isInteger(value.textOffset) &&
    typeof value.start === 'number' &&
    typeof value.end === 'number' &&
    (value.start as number) <= (value.end as number)
  );
}

export function isPiperResult(value: unknown): value is PiperResult {
  if (!isRecord(value)) return false;
  if (value.kind === 'cancelled') return true;
  if (value.kind === 'stats') {
    return (
      typeof value.pid === 'number' &&
      typeof value.loads === 'number' &&
      Array.isArray(value.models) &&
      typeof value.rssBytes === 'number' &&
      isRecord(value.onnxruntime) &&
      typeof value.onnxruntime.version === 'string' &&
      isRecord(value.phonemes) &&
      typeof value.phonemes.build === 'string'
    );
  }
  return (
    value.kind === 'speech' &&
    value.samples instanceof Int16Array &&
    typeof value.sampleRate === 'number' &&
    value.sampleRate > 0 &&
    (value.words === null || (Array.isArray(value.words) && value.words.every(isSpan)))
  );
}
