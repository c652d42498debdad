import { gatedLoudness, kWeighting } from '../speech/loudness.js';

/** Full scale of 16-bit samples, as ffmpeg reads them. */
const FULL_SCALE = 32768;

/**
 * Integrated loudness (BS.1770-4, as ffmpeg's `ebur128` reads a file) of 16-bit audio that arrives in pieces: a
 * decoder's output of what was encoded, as a player hears it. Each channel K-weighted as it comes and summed into
 * 100 ms hops; nothing else is held, however long the audio.
 */
export class LoudnessMeter {
  private readonly step: number;
  private readonly stages: ReturnType<typeof kWeighting>;
  /** Per channel, the filters' state: shelf s1, s2, then high pass p1, p2. */
  private readonly state: Float64Array[];
  private readonly energies: number[] = [];
  private energy = 0;
  private inHop = 0;
  private frames = 0;
  private partial = Buffer.alloc(0);

  constructor(
    sampleRate: number,
    private readonly channels = 1,
  ) {
    this.step = Math.max(1, Math.round(sampleRate / 10));
    this.stages = kWeighting(sampleRate);
    this.state = Array.from({ length: channels }, () => new Float64Array(4));
  }

  /** The bytes of s16le samples, channels interleaved, in pieces of any length. */
  push(pcm: Buffer): void {
    const bytes = this.partial.length ? Buffer.concat([this.partial, pcm]) : pcm;
    const frameBytes = 2 * this.channels;
    const whole = bytes.length - (bytes.length % frameBytes);
    const [shelf, pass] = this.stages;
    for (let at = 0; at < whole; at += frameBytes) {
      for (let channel = 0; channel < this.channels; channel += 1) {
        const s = this.state[channel] as Float64Array;
        const x = bytes.readInt16LE(at + 2 * channel) / FULL_SCALE;
        // Transposed direct form II, both stages, as loudness.ts meters.
        const y = shelf.b0 * x + (s[0] as number);
        s[0] = shelf.b1 * x - shelf.a1 * y + (s[1] as number);
        s[1] = shelf.b2 * x - shelf.a2 * y;
        const z = pass.b0 * y + (s[2] as number);
        s[2] = pass.b1 * y - pass.a1 * z + (s[3] as number);
        s[3] = pass.b2 * y - pass.a2 * z;
        this.energy += z * z;
      }
      this.frames += 1;
      this.inHop += 1;
      if (this.inHop === this.step) {
        this.energies.push(this.energy);
        this.energy = 0;
        this.inHop = 0;
      }
    }
    this.partial = Buffer.from(bytes.subarray(whole));
  }

  /** LUFS of everything pushed; −Infinity for silence. */
  finish(): number {
    const energies = this.energies.length === 0 ? [this.energy] : this.energies;
    return gatedLoudness({ energies: Float64Array.from(energies), step: this.step, length: this.frames });
  }
}
