/** Jobs and results between RhvoiceEngine and rhvoice-host.ts. */

export type RhvoiceJob = { kind: 'describe' } | { kind: 'synthesize'; voice: string; text: string };

/** A word as RHVoice reported it: a span of the UTF-8 text and the samples delivered before it began and ended. */
export interface RhvoiceWordMark {
  byteOffset: number;
  byteLength: number;
  startSample: number;
  endSample: number;
}

export type RhvoiceResult =
  | { kind: 'description'; voices: string[]; sampleRate: number }
  | { kind: 'speech'; samples: Int16Array; sampleRate: number; words: RhvoiceWordMark[] };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function isWordMark(value: unknown): value is RhvoiceWordMark {
  return (
    isRecord(value) &&
    isCount(value.byteOffset) &&
    isCount(value.byteLength) &&
    isCount(value.startSample) &&
    isCount(value.endSample)
  );
}

export function isRhvoiceResult(value: unknown): value is RhvoiceResult {
  if (!isRecord(value)) return false;
  if (value.kind === 'description') {
    return isCount(value.sampleRate) && Array.isArray(value.voices) && value.voices.every((voice) => typeof voice === 'string');
  }
  return (
    value.kind === 'speech' &&
    value.samples instanceof Int16Array &&
    isCount(value.sampleRate) &&
    value.sampleRate > 0 &&
    Array.isArray(value.words) &&
    value.words.every(isWordMark)
  );
}
