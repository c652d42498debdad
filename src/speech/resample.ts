// Speech at another sample rate, in process: a dialogue's voices come at their engines' rates (16, 22.05, 24 kHz)
// and are joined into one recording at the request voice's. Band-limited interpolation (a Kaiser-windowed sinc, as
// libsamplerate's and SoX's resamplers are built): below the lower rate's Nyquist frequency nothing is lost; above it
// nothing folds back as aliasing.
import type { SpeechChunk } from '../engines/types.js';
import { kaiserWindow } from './kaiser.js';

/** Zero crossings of the sinc on each side, at the lower of the two rates: the filter's length. */
const ZERO_CROSSINGS = 32;
/** Steps of the kernel's table between two zero crossings (linear interpolation between them). */
const TABLE_STEPS = 256;
/** The pass band ends this far below the lower rate's Nyquist frequency (the transition band lies between). */
const ROLL_OFF = 0.9;
/** The Kaiser window's beta: about 80 dB of stop band. */
const KAISER_BETA = 8;

/** The windowed sinc at 0, 1/TABLE_STEPS, … ZERO_CROSSINGS zero crossings (and one step past, for interpolation). */
const KERNEL: Float64Array = (() => {
  const table = new Float64Array(ZERO_CROSSINGS * TABLE_STEPS + 2);
  for (let index = 0; index < table.length; index += 1) {
    const x = index / TABLE_STEPS;
    table[index] = (x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x)) * kaiserWindow(x / ZERO_CROSSINGS, KAISER_BETA);
  }
  return table;
})();

function kernelAt(x: number): number {
  const position = Math.abs(x) * TABLE_STEPS;
  const index = Math.floor(position);
  if (index >= KERNEL.length - 1) return 0;
  const low = KERNEL[index] as number;
  return low + ((KERNEL[index + 1] as number) - low) * (position - index);
}

/** Phases at most for which the filter's taps are computed once (a ratio of two common rates has a few hundred). */
const MAX_PHASES = 2048;

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/**
 * 16-bit samples at `from` Hz → at `to` Hz; the same samples when the rates are the same. Output sample i stands at
 * input position i·from/to; for a ratio of whole rates the fractions of those positions repeat every `phases`
 * outputs, so each phase's taps are computed once (a polyphase filter), and the inner loop only multiplies and adds.
 */
export function resampleSamples(samples: Int16Array, from: number, to: number): Int16Array {
  if (from === to || samples.length === 0) return samples;
  // Below the lower rate's Nyquist frequency: the kernel is widened (in input samples) when going down.
  const scale = Math.min(1, to / from) * ROLL_OFF;
  const reach = Math.ceil(ZERO_CROSSINGS / scale);
  const width = 2 * reach + 1;
  const divisor = Number.isInteger(from) && Number.isInteger(to) ? gcd(from, to) : 0;
  const phases = divisor > 0 && to / divisor <= MAX_PHASES ? to / divisor : 0;
  const advance = phases > 0 ? from / divisor : 0;
  // taps[phase * width + reach + k]: the weight of input sample n + k for an output at n + phase / phases.
  const taps = new Float64Array(phases * width);
  for (let phase = 0; phase < phases; phase += 1) {
    for (let k = -reach; k <= reach; k += 1) taps[phase * width + reach + k] = kernelAt((phase / phases - k) * scale) * scale;
  }
  const output = new Int16Array(Math.round((samples.length * to) / from));
  for (let index = 0; index < output.length; index += 1) {
    let sum = 0;
    if (phases > 0) {
      const base = Math.floor((index * advance) / phases);
      const row = ((index * advance) % phases) * width;
      const first = Math.max(-reach, -base);
      const last = Math.min(reach, samples.length - 1 - base);
      for (let k = first; k <= last; k += 1) sum += (samples[base + k] as number) * (taps[row + reach + k] as number);
    } else {
      const centre = (index * from) / to;
      const first = Math.max(0, Math.ceil(centre - reach));
      const last = Math.min(samples.length - 1, Math.floor(centre + reach));
      for (let at = first; at <= last; at += 1) sum += (samples[at] as number) * kernelAt((centre - at) * scale) * scale;
    }
    output[index] = Math.max(-32768, Math.min(32767, Math.round(sum)));
  }
  return output;
}

/** The chunk at `sampleRate` (its word times are in seconds, and stay). */
export function resampleChunk<T extends SpeechChunk>(chunk: T, sampleRate: number): T {
  if (chunk.sampleRate === sampleRate) return chunk;
  return { ...chunk, samples: resampleSamples(chunk.samples, chunk.sampleRate, sampleRate), sampleRate };
}
