/**
 * Loudness of 16-bit audio (mono speech, or a video's mix, channels interleaved) as ITU-R BS.1770-4 and EBU R128
 * define it: integrated loudness (K-weighted, gated) in LUFS and an estimate of the true peak in dBTP. Pure
 * functions over the samples, at their own rate.
 */
import { kaiserWindow } from './kaiser.js';

/** The highest true peak EBU R128 s1 and the streaming platforms accept. */
export const TRUE_PEAK_CEILING = -1;

/** Full scale of 16-bit samples, as ffmpeg reads them (−32768 is −1.0). */
const FULL_SCALE = 32768;
/** BS.1770-4 §2.8: gating blocks of 400 ms, every 100 ms (75 % overlap). */
const BLOCKS_PER_WINDOW = 4;
const ABSOLUTE_GATE = -70;
const RELATIVE_GATE = -10;

interface Biquad {
  b0: number;
  b1: number;
  b2: number;
  a1: number;
  a2: number;
}

/**
 * The two K-weighting stages (BS.1770-4 §2.1: a high shelf for the head, then a high pass) at any sample rate, by
 * the bilinear transform from the analogue prototypes fitted to the 48 kHz coefficients, as libebur128 derives them.
 */
export function kWeighting(sampleRate: number): [Biquad, Biquad] {
  const shelfK = Math.tan((Math.PI * 1681.974450955533) / sampleRate);
  const shelfQ = 0.7071752369554196;
  const vh = 10 ** (3.999843853973347 / 20);
  const vb = vh ** 0.4996667741545416;
  const shelfA0 = 1 + shelfK / shelfQ + shelfK * shelfK;
  const shelf: Biquad = {
    b0: (vh + (vb * shelfK) / shelfQ + shelfK * shelfK) / shelfA0,
    b1: (2 * (shelfK * shelfK - vh)) / shelfA0,
    b2: (vh - (vb * shelfK) / shelfQ + shelfK * shelfK) / shelfA0,
    a1: (2 * (shelfK * shelfK - 1)) / shelfA0,
    a2: (1 - shelfK / shelfQ + shelfK * shelfK) / shelfA0,
  };
  const passK = Math.tan((Math.PI * 38.13547087602444) / sampleRate);
  const passQ = 0.5003270373238773;
  const passA0 = 1 + passK / passQ + passK * passK;
  // libebur128 leaves the high pass's numerator at 1, −2, 1: its gain at mid frequencies is then exactly 1.
  const pass: Biquad = { b0: 1, b1: -2, b2: 1, a1: (2 * (passK * passK - 1)) / passA0, a2: (1 - passK / passQ + passK * passK) / passA0 };
  return [shelf, pass];
}

/**
 * Integrated loudness in LUFS (BS.1770-4 §2, mono or stereo: each channel's weight 1, their powers summed);
 * −Infinity when no block passes the absolute gate (silence). Audio shorter than one 400 ms block is measured as one
 * block of its own length.
 */
export function integratedLoudness(samples: Int16Array, sampleRate: number, channels = 1): number {
  return gatedLoudness(hopEnergies(samples, sampleRate, channels));
}

/** Audio as BS.1770 meters it: the K-weighted energy of each 100 ms hop (the gating step), its channels' summed. */
export interface HopEnergies {
  energies: Float64Array;
  /** Samples (frames) per hop. */
  step: number;
  /** Frames in all. */
  length: number;
}

/** The hop energies of 16-bit audio, channels interleaved; gatedLoudness of them is its integrated loudness. */
export function hopEnergies(samples: Int16Array, sampleRate: number, channels = 1): HopEnergies {
  const step = Math.max(1, Math.round(sampleRate / 10));
  const split = channelsOf(samples, channels);
  const energies = split.map((channel) => stepEnergies(channel, sampleRate, step)).reduce((sum, energy) => sum.map((value, hop) => value + (energy[hop] ?? 0)));
  return { energies, step, length: (split[0] as Int16Array).length };
}

/** Integrated loudness of hop energies, gated (BS.1770-4 §2.8); −Infinity when no block passes the absolute gate. */
export function gatedLoudness({ energies, step, length }: HopEnergies): number {
  const blocks = blockPowers(energies, step, length);
  const loud = blocks.filter((power) => blockLoudness(power) > ABSOLUTE_GATE);
  if (loud.length === 0) return -Infinity;
  const relativeGate = blockLoudness(mean(loud)) + RELATIVE_GATE;
  return blockLoudness(mean(loud.filter((power) => blockLoudness(power) > relativeGate)));
}

/** Each channel's samples, of samples interleaved frame by frame. */
function channelsOf(samples: Int16Array, channels: number): Int16Array[] {
  if (channels === 1) return [samples];
  const frames = Math.floor(samples.length / channels);
  return Array.from({ length: channels }, (_, channel) => {
    const own = new Int16Array(frames);
    for (let frame = 0; frame < frames; frame += 1) own[frame] = samples[frame * channels + channel] ?? 0;
    return own;
  });
}

/** Sum of the squared K-weighted signal over each whole `step` of samples (the 100 ms hops). */
function stepEnergies(samples: Int16Array, sampleRate: number, step: number): Float64Array {
  const [shelf, pass] = kWeighting(sampleRate);
  const hops = Math.floor(samples.length / step);
  // A sound shorter than one hop still counts (as one short hop).
  const energies = new Float64Array(Math.max(1, hops));
  const end = hops === 0 ? samples.length : hops * step;
  const { b0, b1, b2, a1, a2 } = shelf;
  const { b0: c0, b1: c1, b2: c2, a1: d1, a2: d2 } = pass;
  // Transposed direct form II, both stages in one pass.
  let s1 = 0;
  let s2 = 0;
  let p1 = 0;
  let p2 = 0;
  for (let hop = 0; hop < energies.length; hop += 1) {
    let energy = 0;
    const last = Math.min(end, (hop + 1) * step);
    for (let index = hop * step; index < last; index += 1) {
      const x = (samples[index] ?? 0) / FULL_SCALE;
      const y = b0 * x + s1;
      s1 = b1 * x - a1 * y + s2;
      s2 = b2 * x - a2 * y;
      const z = c0 * y + p1;
      p1 = c1 * y - d1 * z + p2;
      p2 = c2 * y - d2 * z;
      energy += z * z;
    }
    energies[hop] = energy;
  }
  return energies;
}

/** Mean square of every 400 ms block; short audio is one block of all of it. */
function blockPowers(energies: Float64Array, step: number, length: number): number[] {
  if (energies.length < BLOCKS_PER_WINDOW) {
    const total = energies.reduce((sum, energy) => sum + energy, 0);
    return length === 0 ? [] : [total / Math.min(length, energies.length * step)];
  }
  const powers: number[] = [];
  for (let start = 0; start + BLOCKS_PER_WINDOW <= energies.length; start += 1) {
    let sum = 0;
    for (let hop = start; hop < start + BLOCKS_PER_WINDOW; hop += 1) sum += energies[hop] ?? 0;
    powers.push(sum / (BLOCKS_PER_WINDOW * step));
  }
  return powers;
}

function blockLoudness(power: number): number {
  return -0.691 + 10 * Math.log10(power);
}

/** The mean square (K-weighted, channels' summed) of a steady sound of `loudness` LUFS: blockLoudness undone. */
export function loudnessPower(loudness: number): number {
  return 10 ** ((loudness + 0.691) / 10);
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

/** Taps on each side of an interpolated point: flat (within 0.01 dB) to 0.4 of the sample rate. */
const HALF_TAPS = 12;
const TAPS = 2 * HALF_TAPS;
const KAISER_BETA = 8;

/**
 * The 4× interpolator of the true-peak meter (BS.1770-4 Annex 2): for each of the points 1/4, 2/4 and 3/4 of the
 * way from a sample to the next, a Kaiser-windowed sinc over the TAPS nearest samples, scaled to unit gain at DC.
 */
const PHASES = [1, 2, 3].map((quarters) => {
  const taps = Float64Array.from({ length: TAPS }, (_, tap) => {
    const t = quarters / 4 - (tap - HALF_TAPS + 1);
    const window = kaiserWindow(t / HALF_TAPS, KAISER_BETA);
    return (Math.sin(Math.PI * t) / (Math.PI * t)) * window;
  });
  const sum = taps.reduce((total, tap) => total + tap, 0);
  return taps.map((tap) => tap / sum);
});
const [QUARTER, HALF, THREE_QUARTERS] = PHASES as [Float64Array, Float64Array, Float64Array];


/** No interpolated point exceeds the largest of the samples it is made of by more than this factor. */
const MAX_OVERSHOOT = Math.max(...PHASES.map((taps) => taps.reduce((total, tap) => total + Math.abs(tap), 0)));
/** Taps nearest a point, either side together, that levelOver sums first. */
const NEAR_TAPS = 8;
const FIRST_NEAR = HALF_TAPS - NEAR_TAPS / 2;
/**
 * Of each phase, Σ|tap| of the taps beyond the NEAR_TAPS nearest (0.14, 0.19, 0.14): with the loudest sample they
 * reach, what they can add to the near taps' sum, at most. Kept a hair larger than the sums, for float rounding.
 */
const [FAR_QUARTER, FAR_HALF, FAR_THREE_QUARTERS] = PHASES.map((taps) => taps.reduce((total, tap, index) => total + (index >= FIRST_NEAR && index < FIRST_NEAR + NEAR_TAPS ? 0 : Math.abs(tap)), 0) * (1 + 1e-9) + 1e-9) as [number, number, number];
/** Samples per stretch: a stretch is passed over whole when even its largest overshoot stays under a level. */
const STRETCH = 32;

/** Estimated true peak in dBTP (4× oversampled, BS.1770-4 Annex 2), the highest of any channel; −Infinity for digital silence. */
export function truePeak(samples: Int16Array, channels = 1): number {
  let loudest = 0;
  for (let index = 0; index < samples.length; index += 1) loudest = Math.max(loudest, Math.abs(samples[index] ?? 0));
  // Known from the start, the loudest sample passes over every stretch that cannot beat it.
  const meter = new TruePeakMeter(channels, loudest);
  meter.push(samples);
  return meter.finish();
}

/** Frames a meter holds before it reads them. */
const METER_BLOCK = 16_384;

/**
 * truePeak of 16-bit audio that arrives in pieces (a decoder's output as it comes): each block of frames is read as
 * soon as the points after it can be interpolated, so that the answer is ready soon after the last piece. Holds a
 * block at a time, however long the audio.
 */
export class TruePeakMeter {
  /** Per channel: the frames held, the first HALF_TAPS of the first block being the silence before the sound. */
  private readonly held: Float32Array[];
  private length = HALF_TAPS;
  /** Bytes of a frame not yet whole (a piece can end inside one). */
  private partial = Buffer.alloc(0);
  private peak: number;

  /** `atLeast`: a level (sample magnitude) the peak is known to reach, if any: stretches that cannot beat it are passed over. */
  constructor(
    private readonly channels = 1,
    atLeast = 0,
  ) {
    this.peak = atLeast;
    this.held = Array.from({ length: channels }, () => new Float32Array(METER_BLOCK + 2 * HALF_TAPS));
  }

  /** Samples, channels interleaved: an Int16Array, or the bytes of one (s16le) in pieces of any length. */
  push(pcm: Int16Array | Buffer): void {
    let samples: Int16Array;
    if (pcm instanceof Int16Array) samples = pcm;
    else {
      const bytes = this.partial.length ? Buffer.concat([this.partial, pcm]) : pcm;
      const whole = bytes.length - (bytes.length % (2 * this.channels));
      // A copy when the bytes do not start on an even address (an Int16Array must).
      const aligned = bytes.byteOffset % 2 === 0 ? bytes : Buffer.from(bytes.subarray(0, whole));
      samples = new Int16Array(aligned.buffer, aligned.byteOffset, whole / 2);
      this.partial = Buffer.from(bytes.subarray(whole));
    }
    const frames = Math.floor(samples.length / this.channels);
    for (let frame = 0; frame < frames; ) {
      const room = (this.held[0] as Float32Array).length - this.length;
      const taken = Math.min(room, frames - frame);
      if (this.channels === 1) (this.held[0] as Float32Array).set(samples.subarray(frame, frame + taken), this.length);
      else {
        this.held.forEach((held, channel) => {
          for (let at = 0; at < taken; at += 1) held[this.length + at] = samples[(frame + at) * this.channels + channel] ?? 0;
        });
      }
      this.length += taken;
      frame += taken;
      if (this.length === (this.held[0] as Float32Array).length) this.read();
    }
  }

  /** The true peak in dBTP of everything pushed (the silence after it included). */
  finish(): number {
    // The silence after the sound.
    if (this.length + HALF_TAPS > (this.held[0] as Float32Array).length) this.read();
    for (const held of this.held) held.fill(0, this.length, this.length + HALF_TAPS);
    this.length += HALF_TAPS;
    this.read();
    return 20 * Math.log10(this.peak / FULL_SCALE);
  }

  /**
   * Reads every held frame whose points can be interpolated (HALF_TAPS frames on either side), keeping the last
   * 2 × HALF_TAPS frames for the next block. Frame `position` of `held` is levelAfter's index `position − HALF_TAPS`.
   */
  private read(): void {
    const last = this.length - HALF_TAPS;
    for (const held of this.held) {
      this.peak = heldPeak(held.subarray(0, this.length), this.peak);
      held.copyWithin(0, last - HALF_TAPS, this.length);
    }
    this.length = 2 * HALF_TAPS;
  }
}

/**
 * The highest of `peak` and the levels of a block of held frames: those from HALF_TAPS to HALF_TAPS before its end
 * (the others are read with the block before or after), position p being levelAfter's index p − HALF_TAPS.
 */
function heldPeak(held: Float32Array, peak: number): number {
  const last = held.length - HALF_TAPS;
  const peaks = stretchPeaks(held);
  // A sample's own level is one of its levels: the block's loudest sample passes over whatever cannot beat it.
  let highest = peaks.reduce((loudest, level) => Math.max(loudest, level), peak);
  for (let stretch = 0; stretch < peaks.length - 2; stretch += 1) {
    const from = Math.max(HALF_TAPS, stretch * STRETCH);
    const to = Math.min(last, (stretch + 1) * STRETCH);
    if (from >= to || !mayExceed(peaks, stretch, highest)) continue;
    const reach = reachOf(peaks, stretch);
    for (let position = from; position < to; position += 1) highest = Math.max(highest, levelOver(held, position - HALF_TAPS, highest, reach));
  }
  return highest;
}

/** The samples with HALF_TAPS zeros (the silence before and after the sound) on each side, for the interpolator. */
function padded(samples: Int16Array): Float32Array {
  const signal = new Float32Array(samples.length + 2 * HALF_TAPS);
  signal.set(samples, HALF_TAPS);
  return signal;
}

/** The highest |sample| of each stretch, with an empty stretch at each end so that every stretch has two neighbours. */
function stretchPeaks(samples: Int16Array | Float32Array): Float64Array {
  const stretches = Math.ceil(samples.length / STRETCH);
  const peaks = new Float64Array(stretches + 2);
  for (let stretch = 0; stretch < stretches; stretch += 1) {
    let peak = 0;
    const end = Math.min(samples.length, (stretch + 1) * STRETCH);
    for (let index = stretch * STRETCH; index < end; index += 1) peak = Math.max(peak, Math.abs(samples[index] ?? 0));
    peaks[stretch + 1] = peak;
  }
  return peaks;
}

/** The loudest sample any point of `stretch` is made of: its points reach HALF_TAPS (< STRETCH) samples into each neighbour. */
function reachOf(peaks: Float64Array, stretch: number): number {
  return Math.max(peaks[stretch] ?? 0, peaks[stretch + 1] ?? 0, peaks[stretch + 2] ?? 0);
}

/** Whether a sample of `stretch` or a point after it can pass `level`: its points reach HALF_TAPS (< STRETCH) samples into each neighbour. */
function mayExceed(peaks: Float64Array, stretch: number, level: number): boolean {
  return reachOf(peaks, stretch) * MAX_OVERSHOOT > level;
}

/**
 * levelAfter where it may pass `level`; elsewhere the sample's own level (at most `level`, as every point is then).
 * The NEAR_TAPS nearest taps are summed first: with what the others can add at most (`reach`, the loudest sample they
 * are made of, times their Σ|tap|), a point that stays at or under `level` needs no more. On limited speech most
 * points near the peak level are a dB or more under it: most are settled by a third of the work (the meter of a
 * video's decoded minute: mono speech 42 -> 27 ms, a stereo mix 104-112 -> 68-71 ms).
 */
function levelOver(signal: Float32Array, index: number, level: number, reach: number): number {
  const own = Math.abs(signal[index + HALF_TAPS] ?? 0);
  if (own > level) return levelAfter(signal, index);
  let quarter = 0;
  let half = 0;
  let threeQuarters = 0;
  for (let tap = FIRST_NEAR; tap < FIRST_NEAR + NEAR_TAPS; tap += 1) {
    const sample = signal[index + 1 + tap] ?? 0;
    quarter += (QUARTER[tap] ?? 0) * sample;
    half += (HALF[tap] ?? 0) * sample;
    threeQuarters += (THREE_QUARTERS[tap] ?? 0) * sample;
  }
  const settled = Math.abs(quarter) + FAR_QUARTER * reach <= level && Math.abs(half) + FAR_HALF * reach <= level && Math.abs(threeQuarters) + FAR_THREE_QUARTERS * reach <= level;
  return settled ? own : levelAfter(signal, index);
}

/** The highest level from sample `index` to the next, that one excluded: the sample and the three points after it. */
function levelAfter(signal: Float32Array, index: number): number {
  let quarter = 0;
  let half = 0;
  let threeQuarters = 0;
  // signal[index + 1 + tap] is sample index + tap − HALF_TAPS + 1 (see padded).
  for (let tap = 0; tap < TAPS; tap += 1) {
    const sample = signal[index + 1 + tap] ?? 0;
    quarter += (QUARTER[tap] ?? 0) * sample;
    half += (HALF[tap] ?? 0) * sample;
    threeQuarters += (THREE_QUARTERS[tap] ?? 0) * sample;
  }
  return Math.max(Math.abs(signal[index + HALF_TAPS] ?? 0), Math.abs(quarter), Math.abs(half), Math.abs(threeQuarters));
}

/** The loudness a mono signal needs to measure `target` once copied into each of `channels` channels (BS.1770 sums their powers). */
export function monoTarget(target: number, channels: number): number {
  return target - 10 * Math.log10(channels);
}

export interface Normalized {
  /** The samples, turned down where the gain would lift their true peak over the ceiling (the others as they were). */
  samples: Int16Array;
  /** Gain in dB to apply to `samples`: with it they measure the target; 0 for silence. */
  gain: number;
}

/** Rounds of gain, limiter and measure at most; each makes up for what the limiter took in the one before. */
const MAX_ROUNDS = 5;
/** Close enough to the target to stop: meters print a tenth of a LU. */
const TOLERANCE = 0.1;
/** The most the limiter may cost: beyond it speech would be squashed, so a target that needs more is not reached. */
const MAX_MAKEUP = 9;

/**
 * What brings speech to `target` LUFS with its true peak at most `ceiling` dBTP: a gain, and the samples with their
 * loudest moments held down by a look-ahead limiter so that the gain lifts no peak over the ceiling. The limiter
 * lowers the loudness a little: the loudness is measured again with it in place and the gain raised to make up (at
 * most MAX_MAKEUP dB; speech whose peaks stand far above its loudness then ends below a high target).
 */
export function normalizeLoudness(samples: Int16Array, sampleRate: number, target: number, ceiling: number, channels = 1): Normalized {
  const measured = integratedLoudness(samples, sampleRate, channels);
  if (!Number.isFinite(measured)) return { samples, gain: 0 };
  const plain = target - measured;
  if (truePeak(samples, channels) + plain <= ceiling) return { samples, gain: plain };
  const levels = new PeakLevels(channelsOf(samples, channels));
  let gain = plain;
  let previous: { gain: number; loudness: number } | undefined;
  let rounds: Int16Array | undefined;
  for (let round = 1; ; round += 1) {
    // Each round writes over the one before: only the last is kept.
    const limited = limitLevels(samples, channels, levels, sampleRate, limitOf(ceiling - gain), (rounds ??= new Int16Array(samples.length)));
    // The absolute gate moves with the gain too, but speech sits far above it, where that changes nothing.
    const loudness = integratedLoudness(limited, sampleRate, channels) + gain;
    // Loudness grows more slowly than the gain once the limiter works: the secant through the last two rounds.
    const slope = previous ? Math.min(1, Math.max(0.2, (loudness - previous.loudness) / (gain - previous.gain))) : 1;
    const next = Math.min(plain + MAX_MAKEUP, gain + (target - loudness) / slope);
    if (Math.abs(target - loudness) < TOLERANCE || round === MAX_ROUNDS || next === gain) return { samples: limited, gain };
    previous = { gain, loudness };
    gain = next;
  }
}

/** Look-ahead and release of the limiter, in dB per millisecond of gain change. */
const ATTACK_DB_PER_MS = 3;
const RELEASE_DB_PER_MS = 0.2;

/**
 * The samples with every level (true peak) over `ceiling` dBFS brought down to it, by a gain that falls ahead of
 * each peak at ATTACK_DB_PER_MS and comes back after it at RELEASE_DB_PER_MS; the samples themselves when none is over.
 */
export function limitPeaks(samples: Int16Array, sampleRate: number, ceiling: number): Int16Array {
  return limitLevels(samples, 1, new PeakLevels([samples]), sampleRate, limitOf(ceiling));
}

/** A level in dBFS as a sample magnitude. */
function limitOf(ceiling: number): number {
  return FULL_SCALE * 10 ** (ceiling / 20);
}

/** PeakLevels finds levels over this factor of the limit asked (6 dB under it): each round's limit is some dB under the one before. */
const FIND_BELOW = 10 ** (-6 / 20);

/**
 * levelAfter of every frame (the highest of its channels'), found a stretch at a time where it may pass a limit, and
 * kept for lower limits.
 */
class PeakLevels {
  readonly levels: Float32Array;
  /** The highest of `levels` in each stretch of frames (0 where none was found yet): the limiter passes over the rest. */
  readonly stretchLevels: Float32Array;
  /**
   * Per channel: the samples (padded), each stretch's loudest, and the lowest limit each stretch's levels were found
   * for (Infinity: none yet): its levels over that are exact, the others at most that.
   */
  private readonly channels: ReadonlyArray<{ signal: Float32Array; peaks: Float64Array; foundFor: Float64Array }>;

  constructor(channels: readonly Int16Array[]) {
    this.levels = new Float32Array((channels[0] as Int16Array).length);
    this.stretchLevels = new Float32Array(Math.ceil(this.levels.length / STRETCH));
    this.channels = channels.map((samples) => {
      const peaks = stretchPeaks(samples);
      return { signal: padded(samples), peaks, foundFor: new Float64Array(peaks.length - 2).fill(Infinity) };
    });
  }

  /** Makes `levels` hold every level over `limit` exactly (the others are at most `limit`). */
  findOver(limit: number): void {
    for (const { signal, peaks, foundFor } of this.channels) {
      for (let stretch = 0; stretch < foundFor.length; stretch += 1) {
        if (limit >= (foundFor[stretch] as number) || !mayExceed(peaks, stretch, limit)) continue;
        const end = Math.min(this.levels.length, (stretch + 1) * STRETCH);
        const reach = reachOf(peaks, stretch);
        // Found for a limit some way under this one: the next rounds' lower limits need not find them again.
        const below = limit * FIND_BELOW;
        let highest = this.stretchLevels[stretch] ?? 0;
        for (let index = stretch * STRETCH; index < end; index += 1) {
          const level = Math.max(this.levels[index] ?? 0, levelOver(signal, index, below, reach));
          this.levels[index] = level;
          highest = Math.max(highest, level);
        }
        this.stretchLevels[stretch] = highest;
        foundFor[stretch] = below;
      }
    }
  }
}

/**
 * limitPeaks, with the levels found so far, one gain for every channel of a frame (the stereo image kept); gains are
 * linear, so that a ramp is a product per frame. Written `into` that array if given (the samples themselves when
 * nothing is over the limit).
 */
function limitLevels(samples: Int16Array, channels: number, peakLevels: PeakLevels, sampleRate: number, limit: number, into?: Int16Array): Int16Array {
  peakLevels.findOver(limit);
  const { levels, stretchLevels } = peakLevels;
  const length = levels.length;
  const attack = 10 ** ((ATTACK_DB_PER_MS * 1000) / sampleRate / 20);
  const release = 10 ** ((RELEASE_DB_PER_MS * 1000) / sampleRate / 20);
  // The gain is 1 but around the frames over the limit: from as far ahead of each as a fall from the deepest cut
  // takes to as far after it as the return takes (two frames more, for the rounding of gains kept as 32-bit floats).
  // Only those spans are worked on; where they meet, they are one.
  let loudest = 0;
  for (let stretch = 0; stretch < stretchLevels.length; stretch += 1) loudest = Math.max(loudest, stretchLevels[stretch] ?? 0);
  if (loudest <= limit) return samples;
  const depth = Math.log(loudest / limit);
  const ahead = Math.ceil(depth / Math.log(attack)) + 2;
  const after = Math.ceil(depth / Math.log(release)) + 4;
  const spans: Array<[number, number]> = [];
  let current: [number, number] | undefined;
  for (let stretch = 0; stretch < stretchLevels.length; stretch += 1) {
    if ((stretchLevels[stretch] ?? 0) <= limit) continue;
    const end = Math.min(length, (stretch + 1) * STRETCH);
    for (let index = stretch * STRETCH; index < end; index += 1) {
      if ((levels[index] ?? 0) <= limit) continue;
      if (current && index - ahead <= current[1]) current[1] = Math.min(length, index + after);
      else spans.push((current = [Math.max(0, index - ahead), Math.min(length, index + after)]));
    }
  }
  const limited = into ?? new Int16Array(samples.length);
  limited.set(samples);
  // One array of gains for every span, as long as the longest.
  const gains = new Float32Array(spans.reduce((longest, [from, to]) => Math.max(longest, to - from + 1), 0));
  for (const [from, to] of spans) limitSpan(samples, limited, channels, levels, limit, from, to, attack, release, gains);
  return limited;
}

/**
 * The limiter over frames `from` to `to` (exclusive), where the gain starts and ends at 1: what each frame needs (the
 * points after a frame lie between it and the next, so both hold them), then what it gets: the gain falls ahead of
 * each peak at `attack` and comes back after it at `release` per frame, never over what any frame needs.
 */
function limitSpan(samples: Int16Array, limited: Int16Array, channels: number, levels: Float32Array, limit: number, from: number, to: number, attack: number, release: number, gains: Float32Array): void {
  gains.fill(1, 0, to - from + 1);
  for (let index = from; index < to; index += 1) {
    const level = levels[index] ?? 0;
    if (level <= limit) continue;
    const needed = limit / level;
    if (needed < (gains[index - from] ?? 1)) gains[index - from] = needed;
    gains[index - from + 1] = needed;
  }
  let gain = 1;
  for (let index = to - from - 1; index >= 0; index -= 1) {
    gain = Math.min(gains[index] ?? 1, gain * attack);
    gains[index] = gain;
  }
  gain = 1;
  for (let index = from; index < to; index += 1) {
    gain = Math.min(gains[index - from] ?? 1, gain * release);
    if (gain >= 1) continue;
    for (let at = index * channels; at < (index + 1) * channels; at += 1) limited[at] = Math.round((samples[at] ?? 0) * gain);
  }
}
