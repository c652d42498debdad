import { abortError } from '../errors.js';
import type { CheckpointStore } from '../storage/checkpoints.js';
import type { SpokenSpan } from './speech.js';

/**
 * What a long job has spoken so far, one checkpoint per utterance in storage (CheckpointStore), so that a run after
 * a crash or a takeover, in this process or on another node, speaks only what is missing: the joined audio is the
 * same samples whether an utterance was spoken now or read back. `job`: what they are kept under (the request and
 * its client, hashed); names `<FORMAT>.<index>`.
 */
export class SpokenCheckpoints {
  private constructor(
    private readonly store: CheckpointStore,
    private readonly job: string,
    private readonly saved: ReadonlySet<string>,
  ) {}

  /** The job's checkpoints as storage holds them now (one listing). */
  static async open(store: CheckpointStore, job: string, signal?: AbortSignal): Promise<SpokenCheckpoints> {
    return new SpokenCheckpoints(store, job, await store.list(job, signal));
  }

  /** Utterances found spoken when the job was opened (what a resumed run did not have to speak again). */
  get found(): number {
    return [...this.saved].filter((name) => name.startsWith(`${FORMAT}.`)).length;
  }

  /** Removes them all (the job is done). */
  clear(): Promise<void> {
    return this.store.clear(this.job);
  }

  /** The utterance at `index` as spoken by an earlier run, or undefined (none, or unreadable, storage failing included: it is spoken again). */
  async load(index: number, signal?: AbortSignal): Promise<SpokenSpan | undefined> {
    const name = this.nameOf(index);
    if (!this.saved.has(name)) return undefined;
    const content = await this.store.load(this.job, name, signal).catch(() => {
      if (signal?.aborted) throw abortError(signal.reason);
      return undefined;
    });
    if (!content) return undefined;
    try {
      return decodeSpoken(content);
    } catch {
      return undefined;
    }
  }

  /** Keeps the utterance at `index` before the job counts it spoken. */
  save(index: number, spoken: SpokenSpan, signal?: AbortSignal): Promise<void> {
    return this.store.save(this.job, this.nameOf(index), encodeSpoken(spoken), signal);
  }

  private nameOf(index: number): string {
    return `${FORMAT}.${String(index).padStart(6, '0')}`;
  }
}

/** The layout of encodeSpoken: another layout, another name (a checkpoint of an older release is spoken again). */
const FORMAT = 's1';

/** One spoken utterance as a checkpoint: a 4-byte length, its header as JSON (times and spans, which JSON keeps exactly), then its 16-bit samples (little-endian). */
export function encodeSpoken(spoken: SpokenSpan): Buffer {
  const header: SpokenHeader = { sampleRate: spoken.sampleRate, span: spoken.span, words: spoken.words, pauseBefore: spoken.pauseBefore, samples: spoken.samples.length };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(json.length);
  return Buffer.concat([length, json, sampleBytes(spoken.samples)]);
}

/** encodeSpoken's inverse; throws on a checkpoint that is not one (cut short, or of another layout). */
export function decodeSpoken(content: Buffer): SpokenSpan {
  const length = content.readUInt32LE(0);
  const header = JSON.parse(content.subarray(4, 4 + length).toString('utf8')) as SpokenHeader;
  const body = content.subarray(4 + length);
  if (body.length !== header.samples * 2 || typeof header.sampleRate !== 'number' || typeof header.span?.text !== 'string') {
    throw new Error('not a spoken checkpoint');
  }
  const samples = new Int16Array(header.samples);
  for (let index = 0; index < header.samples; index += 1) samples[index] = body.readInt16LE(index * 2);
  return {
    samples,
    sampleRate: header.sampleRate,
    span: header.span,
    ...(header.words ? { words: header.words } : {}),
    ...(header.pauseBefore === undefined ? {} : { pauseBefore: header.pauseBefore }),
  };
}

interface SpokenHeader {
  sampleRate: number;
  span: SpokenSpan['span'];
  words?: SpokenSpan['words'];
  pauseBefore?: number;
  /** How many samples follow. */
  samples: number;
}

function sampleBytes(samples: Int16Array): Buffer {
  const bytes = Buffer.alloc(samples.length * 2);
  for (let index = 0; index < samples.length; index += 1) bytes.writeInt16LE(samples[index] as number, index * 2);
  return bytes;
}
