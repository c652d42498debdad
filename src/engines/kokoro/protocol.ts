/** Jobs and results between KokoroEngine and kokoro-host.ts. */
import type { OnnxRuntimeInfo } from '../onnx/runtime.js';
import type { SpokenWordSpan } from '../piper/protocol.js';
import type { PackLanguage } from './packs.js';

export type { SpokenWordSpan } from '../piper/protocol.js';

/** A pack file and its share of the voice. */
export interface StylePart {
  file: string;
  weight: number;
}

export type KokoroJob =
  /**
   * `text`: sanitized; `phonemes`: spans of it already in Kokoro's symbols (SSML phoneme, lexicons: the engine has
   * rewritten and checked their IPA). `ticket`: the engine's number for the job, which `cancel` names.
   */
  | {
      kind: 'synthesize';
      ticket: number;
      text: string;
      language: PackLanguage;
      style: StylePart[];
      speed: number;
      phonemes?: { start: number; end: number; symbols: string }[];
    }
  /** The job was given up: stop it before its next inference. */
  | { kind: 'cancel'; ticket: number }
  /** Answered from the host's event loop at once: also how the engine tells a stuck host from a busy one. */
  | { kind: 'stats' };

export type KokoroResult =
  | { kind: 'speech'; samples: Int16Array; sampleRate: number; words: SpokenWordSpan[] | null }
  | { kind: 'stats'; pid: number; loaded: boolean; rssBytes: number; onnxruntime: OnnxRuntimeInfo | null }
  | { kind: 'cancelled' }
  /**
   * The phonemizer's AppError: text it cannot read, or a reading that is not installed (Japanese's dictionary). The
   * job fails with it; the host goes on.
   */
  | { kind: 'refused'; code: RefusalCode; message: string };

/** What a phonemizer may refuse a job with (its AppError's code). */
export const REFUSAL_CODES = ['UNSUPPORTED_TEXT', 'ENGINE_UNAVAILABLE'] as const;
export type RefusalCode = (typeof REFUSAL_CODES)[number];

export function isRefusalCode(code: unknown): code is RefusalCode {
  return REFUSAL_CODES.includes(code as RefusalCode);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isSpan(value: unknown): value is SpokenWordSpan {
  return isRecord(value) && Number.isInteger(value.textOffset) && typeof value.start === 'number' && typeof value.end === 'number' && value.start <= value.end;
}

export function isKokoroResult(value: unknown): value is KokoroResult {
  if (!isRecord(value)) return false;
  if (value.kind === 'cancelled') return true;
  if (value.kind === 'refused') return isRefusalCode(value.code) && typeof value.message === 'string';
  if (value.kind === 'stats') return typeof value.pid === 'number' && typeof value.loaded === 'boolean' && typeof value.rssBytes === 'number';
  return (
    value.kind === 'speech' &&
    value.samples instanceof Int16Array &&
    value.sampleRate === 24_000 &&
    (value.words === null || (Array.isArray(value.words) && value.words.every(isSpan)))
  );
}
