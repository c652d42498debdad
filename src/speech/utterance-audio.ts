// An utterance's audio as the synthesizer joins it: the engine's words moved onto the written text, and the gain and
// rate SSML asked for.
import type { SpeechChunk, WordTiming } from '../engines/types.js';
import type { Ffmpeg } from '../media/ffmpeg.js';
import { rethrowAsAppError, runProcess } from '../media/process.js';
import { tempoFilter } from './audio-encoding.js';
import { pcmBytes } from './pcm.js';
import type { Utterance } from './script.js';

/** The engine's words, which point into the utterance's spoken text, moved to the written words they stand for (offsets within its span). */
export function writtenWords(words: readonly WordTiming[], utterance: Utterance): WordTiming[] {
  return words.flatMap((word) => {
    const written = utterance.spoken.sourceSpan(word.textOffset, word.textOffset + word.textLength);
    if (!written) return [];
    return [{ ...word, textOffset: written.offset - utterance.span.offset, textLength: written.length }];
  });
}

/** The chunk louder or softer by `decibels` (-Infinity: silent), held within 16 bits. */
export function withGain<T extends SpeechChunk>(chunk: T, decibels: number): T {
  if (decibels === 0) return chunk;
  const gain = 10 ** (decibels / 20);
  const samples = Int16Array.from(chunk.samples, (sample) => Math.max(-32768, Math.min(32767, Math.round(sample * gain))));
  return { ...chunk, samples };
}

/** The chunk `rate` times faster, its pitch kept (ffmpeg's atempo), its word times moved with it. */
export async function stretchChunk(ffmpeg: Ffmpeg, chunk: SpeechChunk, rate: number, signal?: AbortSignal): Promise<SpeechChunk> {
  const format = ['-f', 's16le', '-ar', String(chunk.sampleRate), '-ac', '1'];
  const { stdout } = await runProcess(
    ffmpeg.tools.ffmpeg,
    ['-nostdin', '-hide_banner', '-v', 'error', ...format, '-i', 'pipe:0', '-af', tempoFilter(rate), ...format, 'pipe:1'],
    { input: pcmBytes(chunk.samples), signal },
  ).catch(rethrowAsAppError('MEDIA_FAILED'));
  const samples = new Int16Array(stdout.buffer, stdout.byteOffset, Math.floor(stdout.byteLength / 2)).slice();
  const words = chunk.words?.map((word) => ({ ...word, start: word.start / rate, end: word.end / rate }));
  return { samples, sampleRate: chunk.sampleRate, ...(words ? { words } : {}) };
}
