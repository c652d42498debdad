import type { EngineName, PhonemeSpan, SpeechChunk } from '../engines/types.js';
import { abortError } from '../errors.js';
import { version } from '../version.js';

/** What makes two sentences sound the same: the voice, the engine code that speaks it, the spoken speed and the text. */
export interface SentenceKey {
  voiceId: string;
  engine: EngineName;
  /** The speed the voice itself speaks at (Voice.naturalSpeed); a tempo applied to the joined audio is not part of it. */
  speed?: number;
  /** The sentence exactly as given to the engine. */
  text: string;
  /** Spans of it said as IPA (SSML phoneme, lexicons). */
  phonemes?: readonly PhonemeSpan[];
  /** Whose cache it is (a tenant under CACHE_SCOPE=tenant): a hit's speed must not tell one client what another said. */
  partition?: string;
}

export interface CachedSentence {
  /** The caller's own copy: nothing it does to it reaches the cache. */
  chunk: SpeechChunk;
  /** The engine was not called for this caller: the sentence was stored, or already being spoken for another request. */
  hit: boolean;
}

/** Synthesizes the sentence on the engine; the signal is the cache's own when it shares the work. */
export type SynthesizeSentence = (signal: AbortSignal | undefined) => Promise<SpeechChunk>;

interface Entry {
  chunk: SpeechChunk;
  bytes: number;
}

interface InFlight {
  promise: Promise<SpeechChunk>;
  controller: AbortController;
  /** Callers still waiting; when the last of them aborts, so does the synthesis. */
  waiters: number;
}

/** Rough heap cost of a cached sentence beyond its samples: the key, the entry, the map slot. */
const ENTRY_OVERHEAD_BYTES = 256;
/** Rough heap cost of one word timing object (five fields) beyond its string. */
const WORD_OVERHEAD_BYTES = 96;

/**
 * Synthesized sentences of this process, least recently used dropped first once their size passes `maxBytes`
 * (samples plus an estimate of the word timings and keys); 0 turns it off. Identical sentences spoken at the same
 * time share one synthesis; it is stopped only when every caller waiting for it has aborted, and only a synthesis
 * that succeeded without being aborted is kept.
 */
export class SentenceCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, InFlight>();
  private storedBytes = 0;

  constructor(readonly maxBytes: number) {}

  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  /** Estimated bytes held now. */
  get bytes(): number {
    return this.storedBytes;
  }

  /** Sentences held now. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The sentence's audio: stored, shared with an identical sentence being spoken, or spoken now by `synthesize`.
   * Rejects with the signal's reason (as an AppError) when the caller aborts, or with the synthesis' own error.
   */
  async speak(key: SentenceKey, synthesize: SynthesizeSentence, signal?: AbortSignal): Promise<CachedSentence> {
    if (signal?.aborted) throw abortError(signal.reason);
    if (!this.enabled) return { chunk: await synthesize(signal), hit: false };
    const id = sentenceId(key);
    const stored = this.entries.get(id);
    if (stored) {
      this.entries.delete(id);
      this.entries.set(id, stored);
      return { chunk: copyChunk(stored.chunk), hit: true };
    }
    const running = this.inFlight.get(id);
    const flight = running ?? this.start(id, synthesize);
    return { chunk: copyChunk(await this.wait(id, flight, signal)), hit: running !== undefined };
  }

  private start(id: string, synthesize: SynthesizeSentence): InFlight {
    const controller = new AbortController();
    const done = () => {
      if (this.inFlight.get(id) === flight) this.inFlight.delete(id);
    };
    const promise = synthesize(controller.signal).then(
      (chunk) => {
        done();
        if (!controller.signal.aborted) this.store(id, chunk);
        return chunk;
      },
      (error: unknown) => {
        done();
        throw error;
      },
    );
    // Every waiter may have left (aborted): the failure is then nobody's to handle.
    promise.catch(() => undefined);
    const flight: InFlight = { promise, controller, waiters: 0 };
    this.inFlight.set(id, flight);
    return flight;
  }

  private wait(id: string, flight: InFlight, signal: AbortSignal | undefined): Promise<SpeechChunk> {
    flight.waiters += 1;
    if (!signal) return flight.promise;
    return new Promise<SpeechChunk>((resolve, reject) => {
      const onAbort = () => {
        flight.waiters -= 1;
        if (flight.waiters === 0) {
          // No one wants it any more: a later request starts afresh rather than joining a synthesis being stopped.
          if (this.inFlight.get(id) === flight) this.inFlight.delete(id);
          flight.controller.abort(signal.reason);
        }
        reject(abortError(signal.reason));
      };
      // Aborted while the synthesis was being started (the event has been and gone).
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      flight.promise.then(
        (chunk) => {
          signal.removeEventListener('abort', onAbort);
          resolve(chunk);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }

  private store(id: string, chunk: SpeechChunk): void {
    const bytes = sentenceBytes(id, chunk);
    if (bytes > this.maxBytes) return;
    const previous = this.entries.get(id);
    if (previous) {
      this.entries.delete(id);
      this.storedBytes -= previous.bytes;
    }
    // A copy: the engine's array may be a view into a larger message buffer, and callers get copies of their own.
    this.entries.set(id, { chunk: copyChunk(chunk), bytes });
    this.storedBytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.storedBytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.storedBytes -= entry.bytes;
    }
  }
}

/** The map key: the voxreel version too, since a change of engine code can change what a voice says. */
function sentenceId(key: SentenceKey): string {
  return JSON.stringify([version, key.partition ?? null, key.engine, key.voiceId, key.speed ?? null, key.text, key.phonemes ?? []]);
}

function sentenceBytes(id: string, chunk: SpeechChunk): number {
  const words = chunk.words ?? [];
  const wordBytes = words.reduce((sum, word) => sum + WORD_OVERHEAD_BYTES + word.word.length * 2, 0);
  return ENTRY_OVERHEAD_BYTES + id.length * 2 + chunk.samples.byteLength + wordBytes;
}

function copyChunk(chunk: SpeechChunk): SpeechChunk {
  return {
    samples: chunk.samples.slice(),
    sampleRate: chunk.sampleRate,
    ...(chunk.words ? { words: chunk.words.map((word) => ({ ...word })) } : {}),
  };
}
