import { performance } from 'node:perf_hooks';
import { AUDIO_ENCODINGS } from '../src/speech/audio-encoding.js';
import { createEngines, type EngineRegistry } from '../src/engines/index.js';
import { resolveMediaTools } from '../src/media/tools.js';
import { joinSpeech } from '../src/speech/pcm.js';
import type { Speech, SpokenSpan } from '../src/speech/speech.js';
import { runProcess } from '../src/media/process.js';
import { splitSentences } from '../src/speech/sentences.js';

/** As src/synthesis.ts: sentences of one text synthesized at once. */
const SENTENCES_IN_FLIGHT = 2;
const TIMEOUT_MS = 180_000;

/**
 * The work the service wraps, without the service: the same engines started in this process (the same pool size
 * as the server's), the text split into sentences as the service splits it and spoken two at a time, the pieces
 * joined as the service joins them, then ffmpeg on the PCM, spawned directly.
 */
export class RawPipeline {
  private readonly tools = resolveMediaTools();

  private constructor(readonly engines: EngineRegistry) {}

  static async start(poolSize: number): Promise<RawPipeline> {
    return new RawPipeline(await createEngines({ poolSize, jobTimeoutMs: TIMEOUT_MS }));
  }

  async speak(text: string, voice: string): Promise<Speech> {
    const spans = splitSentences(text);
    const chunks: SpokenSpan[] = new Array<SpokenSpan>(spans.length);
    let next = 0;
    const speaker = async () => {
      for (let index = next++; index < spans.length; index = next++) {
        const span = spans[index] as (typeof spans)[number];
        chunks[index] = { ...(await this.engines.synthesize(voice, span.text)), span };
      }
    };
    await Promise.all(Array.from({ length: Math.min(SENTENCES_IN_FLIGHT, spans.length) }, speaker));
    return joinSpeech(chunks);
  }

  /** Text → MP3 file with src/audio-encoding.ts's settings, timed as a whole and by phase. */
  async mp3(text: string, voice: string, output: string): Promise<RawTimes> {
    const started = performance.now();
    const speech = await this.speak(text, voice);
    const spoken = performance.now();
    await this.ffmpeg(
      ['-probesize', '32', '-analyzeduration', '0', '-f', 's16le', '-ar', String(speech.sampleRate), '-ac', '1', '-i', 'pipe:0'],
      ['-map_metadata', '-1', ...AUDIO_ENCODINGS.mp3.args, '-y', output],
      pcmBytes(speech),
    );
    const encoded = performance.now();
    return { totalMs: encoded - started, synthesisMs: spoken - started, encodeMs: encoded - spoken };
  }

  /** Milliseconds of `<program> -version`: what starting the program costs before it does any work. */
  async startupMs(program: 'ffmpeg' | 'ffprobe'): Promise<number> {
    const started = performance.now();
    await runProcess(this.tools[program], ['-hide_banner', '-version'], { timeoutMs: TIMEOUT_MS });
    return performance.now() - started;
  }

  /** One ffmpeg run, argument arrays, no shell. */
  async ffmpeg(inputArgs: readonly string[], outputArgs: readonly string[], input?: Buffer, binary = this.tools.ffmpeg): Promise<void> {
    await runProcess(binary, ['-nostdin', '-hide_banner', '-loglevel', 'error', ...inputArgs, ...outputArgs], { input, timeoutMs: TIMEOUT_MS });
  }

  close(): Promise<void> {
    return this.engines.close();
  }
}

export interface RawTimes {
  totalMs: number;
  synthesisMs: number;
  encodeMs: number;
}

export function pcmBytes(speech: Speech): Buffer {
  return Buffer.from(speech.samples.buffer, speech.samples.byteOffset, speech.samples.byteLength);
}
