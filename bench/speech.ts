import { performance } from 'node:perf_hooks';
import type { Service } from './service.js';
import { round, timings, type Timings } from './stats.js';
import { textOf } from './texts.js';

const FORMATS = ['mp3', 'pcm'] as const;
const CHARACTERS = 2000;

export interface SpeechRow {
  voice: string;
  format: (typeof FORMATS)[number];
  /** To the first non-empty chunk of the body. */
  firstByte: Timings;
  lastByte: Timings;
}

export type SpeechResult = { measured: true; characters: number; rows: SpeechRow[] } | { measured: false; reason: string };

/**
 * POST /v1/audio/speech (OpenAI-compatible, streamed): time to the first body bytes and to the last, for a
 * 2000-character input, per voice and format; one warm-up request per voice first.
 */
export async function measureSpeech(service: Service, voices: readonly string[], runs: number): Promise<SpeechResult> {
  const url = `${service.baseUrl}/v1/audio/speech`;
  const input = textOf(CHARACTERS);
  const rows: SpeechRow[] = [];
  try {
    for (const voice of voices) {
      await speak(url, input, voice, 'mp3');
      for (const format of FORMATS) {
        const first: number[] = [];
        const last: number[] = [];
        for (let run = 0; run < runs; run += 1) {
          const times = await speak(url, input, voice, format);
          first.push(times.first);
          last.push(times.last);
        }
        rows.push({ voice, format, firstByte: timings(first), lastByte: timings(last) });
        console.log(`  /v1/audio/speech ${voice} ${format}: first byte ${round(timings(first).p50, 0)} ms, last ${round(timings(last).p50, 0)} ms`);
      }
    }
  } catch (error) {
    const reason = error instanceof EndpointMissing ? 'endpoint missing' : `failed: ${(error as Error).message}`;
    console.log(`  /v1/audio/speech not measured: ${reason}`);
    return { measured: false, reason };
  }
  return { measured: true, characters: CHARACTERS, rows };
}

class EndpointMissing extends Error {}

async function speak(url: string, input: string, voice: string, format: string): Promise<{ first: number; last: number }> {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tts-1', input, voice, response_format: format }),
    signal: AbortSignal.timeout(120_000),
  });
  if (response.status === 404) throw new EndpointMissing();
  if (!response.ok || !response.body) throw new Error(`${response.status}: ${(await response.text()).slice(0, 300)}`);
  let first: number | undefined;
  for await (const chunk of response.body) if (first === undefined && chunk.length > 0) first = performance.now() - started;
  return { first: first ?? Number.NaN, last: performance.now() - started };
}
