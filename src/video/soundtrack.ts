import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Ffmpeg } from '../media/ffmpeg.js';
import { limitsOf, runPipeline, runProcess, type Command, type ProcessLimits } from '../media/process.js';
import { AAC_CUTOFF, AUDIO_ENCODINGS, lowerCeiling, METER_MARGIN, PEAK_RETRIES, peakCeilingFor } from '../speech/audio-encoding.js';
import { gatedLoudness, hopEnergies, integratedLoudness, loudnessPower, monoTarget, normalizeLoudness, TRUE_PEAK_CEILING, TruePeakMeter, type HopEnergies } from '../speech/loudness.js';
import type { Speech } from '../speech/speech.js';
import { LoudnessMeter } from './heard-loudness.js';

/** Audio channels of a soundtrack: 1 (mono) or 2 (stereo). */
export const CHANNEL_COUNTS = [1, 2] as const;
export type Channels = (typeof CHANNEL_COUNTS)[number];

/**
 * Stereo where there is music (it keeps its stereo image, the voice centred), mono for the voice alone: a mono voice
 * in two identical channels sounds no different and costs AAC twice the time (0.85 s against 0.45 s a minute).
 */
export function soundtrackChannels(channels: Channels | undefined, withMusic: boolean): Channels {
  return channels ?? (withMusic ? 2 : 1);
}

/** What platforms play video at: audio is resampled to it. */
export const VIDEO_SAMPLE_RATE = 48_000;
/** Integrated loudness of a video's soundtrack unless asked otherwise: what YouTube, TikTok and Instagram normalise to. */
export const VIDEO_LOUDNESS = -14;
/** The music bed sits this many LU under the narration, before it ducks. */
export const MUSIC_VOLUME = -12;

/** Music under the narration: a checked audio file (an uploaded asset), looped or cut to the video's length. */
export interface Music {
  file: string;
  /** Its integrated loudness in LUFS where already known (measured on upload); measured here otherwise. */
  loudness?: number;
  /** Its level against the narration's integrated loudness, in LU; default MUSIC_VOLUME. */
  volume?: number;
}

export interface SoundtrackOptions extends ProcessLimits {
  speech: Speech;
  /** Length of the video in seconds: the music is cut (or looped) to it. */
  seconds: number;
  /** Integrated loudness in LUFS; undefined keeps the voice's own level. */
  loudness?: number;
  music?: Music;
  /** Default soundtrackChannels'. */
  channels?: Channels;
  /** The true peak (dBTP) to aim under; default the ceiling less AAC's headroom. The caller meters the result. */
  peakCeiling?: number;
  /** An AAC stream (ADTS): mux (render.ts) puts its frames in the video. */
  output: string;
}

/** Samples ffmpeg's AAC encoder puts before the sound (its encoder delay): the MP4's edit list leaves them out. */
export const AAC_PRIMING = 1024;

/** Samples (per channel) of a soundtrack's sound: the narration's, at VIDEO_SAMPLE_RATE. */
export function soundtrackLength(speech: Pick<Speech, 'samples' | 'sampleRate'>): number {
  return Math.round((speech.samples.length * VIDEO_SAMPLE_RATE) / speech.sampleRate);
}

/** Fades of the music at the start and the end, in seconds (shorter for very short videos). */
const FADE_IN = 1;
const FADE_OUT = 2;
/** Music loudness is measured on at most this much of it, decoded at this rate. */
const MEASURE_RATE = 16_000;
/** dB a mix's true peak rose over the sample peak alimiter held (a 48 kHz mix of a 22 kHz voice and music). */
const INTER_SAMPLE_RISE = 1;
/** Ducking: the voice (the side chain) pulls the music down by up to about 15 dB while it speaks. */
const DUCK = { threshold: 0.02, ratio: 8, attackMs: 20, releaseMs: 400 };
const DUCKING = `sidechaincompress=threshold=${DUCK.threshold}:ratio=${DUCK.ratio}:attack=${DUCK.attackMs}:release=${DUCK.releaseMs}`;
/**
 * The mix goes to the AAC encoder as 16-bit samples, as it did when it came back here as PCM: over floating point,
 * where the values under 16 bits remain, ffmpeg's AAC encoder took 1.2-1.3 s for the benchmark's minute of stereo
 * mix against 0.74 s, and 2.3 s against 0.85 s for its sine-tone music alone (no difference on a voice alone).
 */
const TO_ENCODER = 'aformat=sample_fmts=s16';
/** A mix measured (in the run that encodes it) this far from the target or less is kept; further, it is encoded again with the gain corrected. */
const MIX_TOLERANCE = 0.15;
/** Encodes of a mix after the first, at most, to correct its loudness (the expected loudness is usually close enough). */
const MIX_RETRIES = 2;

/**
 * The audio of a video: the narration at 48 kHz brought to the loudness target, and with `music` the music under it,
 * looped or cut to length, faded in and out, ducked while the voice speaks. With music and a target, the voice is
 * brought near the target on its own; the gain that brings the whole mix (ducked music included) to the target is
 * reckoned from the voice's loudness, hop by hop, and the music's level, and applied in the one ffmpeg run that
 * mixes, holds the peaks, meters (ebur128) and encodes; a mix the meter finds off the target is encoded again with
 * the gain corrected (loud music, long pauses, low targets; never at the default volume and target in the mixes tried).
 *
 * Answers the written file's true peak (dBTP, heard as a player decodes it: the encoder's packets are decoded as
 * they come, beside the encode) with a loudness target; undefined without one, when nothing is promised of peaks.
 */
export async function encodeSoundtrack(ffmpeg: Ffmpeg, options: SoundtrackOptions): Promise<number | undefined> {
  const { speech, loudness, music, output } = options;
  const limits = limitsOf(options);
  const channels = soundtrackChannels(options.channels, music !== undefined);
  const peakCeiling = options.peakCeiling ?? peakCeilingFor('aac');
  if (!music) {
    const perChannel = loudness === undefined ? undefined : monoTarget(loudness, channels);
    const inputs = ['-probesize', '32', '-analyzeduration', '0', '-f', 'f32le', '-ar', String(speech.sampleRate), '-ac', '1', '-i', 'pipe:0'];
    const filters = channels === 2 ? ['-af', 'pan=stereo|c0=c0|c1=c0'] : [];
    // The encoder starts at once (some 80 ms of loading) and gets the samples once they are brought to the target
    // here, as 32-bit floats: the gain applied without rounding. What a player decodes is metered as it comes: its
    // true peak, and its loudness, which resampling and the encoder can move some tenths of a LU (a short Piper
    // sentence 0.5 LU); one that misses the target by more than MIX_TOLERANCE is encoded again with that made up.
    const encodeVoice = async (correction: number): Promise<{ peak: number; heard: number }> => {
      const samples = nextTurn().then(() => {
        const { samples: held, gain } = perChannel === undefined ? { samples: speech.samples, gain: 0 } : reachLoudness(speech.samples, speech.sampleRate, perChannel + correction, peakCeiling);
        return floatPcm(held, gain);
      });
      const meter = new TruePeakMeter(channels);
      const heard = new LoudnessMeter(VIDEO_SAMPLE_RATE, channels);
      // A failure to make the samples is the one reported (the encoder waiting for them is killed). The band limited to
      // the voice's own (a 22 kHz voice has nothing over 11 kHz): less for the encoder to do.
      const pipeline = encodeAndHear(ffmpeg, inputs, filters, { channels, output, cutoff: speech.sampleRate / 2 });
      const hear = (pcm: Buffer) => {
        meter.push(pcm);
        if (perChannel !== undefined) heard.push(pcm);
      };
      await Promise.all([samples, runPipeline(pipeline, { ...limits, input: samples, onStdout: hear })]);
      return { peak: meter.finish() + METER_MARGIN, heard: perChannel === undefined ? Number.NaN : heard.finish() };
    };
    let correction = 0;
    for (let attempt = 0; ; attempt += 1) {
      const { peak, heard } = await encodeVoice(correction);
      if (loudness === undefined) return undefined;
      if (!Number.isFinite(heard) || Math.abs(loudness - heard) <= MIX_TOLERANCE || attempt === MIX_RETRIES) return peak;
      correction += loudness - heard;
    }
  }

  // ffmpeg decodes the music while the voice is measured here. The voice is brought near the target on its own,
  // at its own rate, where its limiter costs least.
  const measured = music.loudness ?? measureMusic(ffmpeg, music.file, options.seconds, limits);
  const voiceTarget = loudness === undefined ? undefined : monoTarget(loudness, channels);
  // Its peaks are held INTER_SAMPLE_RISE lower than the mix's, so that the mix's limiter has little left to do.
  const voice = voiceTarget === undefined ? { samples: speech.samples, gain: 0 } : normalizeLoudness(speech.samples, speech.sampleRate, voiceTarget, peakCeiling - INTER_SAMPLE_RISE);
  const voiceLoudness = voiceTarget ?? integratedLoudness(speech.samples, speech.sampleRate);
  const musicLoudness = await measured;
  // Music with no measurable level (silence) gets no gain rather than an endless one.
  const musicGain = Number.isFinite(musicLoudness) ? voiceLoudness + (music.volume ?? MUSIC_VOLUME) - musicLoudness : 0;
  const seconds = options.seconds;
  const fadeIn = Math.min(FADE_IN, seconds / 4);
  const fadeOut = Math.min(FADE_OUT, seconds / 4);
  const layout = channels === 2 ? 'stereo' : 'mono';
  // alimiter holds sample peaks; between samples the mix still rises about 1 dB higher (measured), so it aims that much lower.
  const limiter = `alimiter=limit=${(10 ** ((peakCeiling - INTER_SAMPLE_RISE) / 20)).toFixed(4)}:level=false:latency=true:attack=5:release=50`;
  // In stereo the voice is in both channels alike (centred), the music keeps its own stereo image.
  const mix = (gain: number, meter: boolean) =>
    [
      `[0:a]volume=${voice.gain.toFixed(2)}dB,aresample=${VIDEO_SAMPLE_RATE},aformat=sample_fmts=fltp:channel_layouts=mono,asplit=2[voice][key]`,
      `[1:a]aresample=${VIDEO_SAMPLE_RATE},aformat=sample_fmts=fltp:channel_layouts=${layout},volume=${musicGain.toFixed(2)}dB,atrim=0:${seconds.toFixed(3)},` +
        `afade=t=in:d=${fadeIn.toFixed(3)},afade=t=out:st=${(seconds - fadeOut).toFixed(3)}:d=${fadeOut.toFixed(3)}[bed]`,
      `[bed][key]${DUCKING}[ducked]`,
      `[voice]${channels === 2 ? 'pan=stereo|c0=c0|c1=c0' : 'anull'}[centred]`,
      `[centred][ducked]amix=inputs=2:duration=first:normalize=0,${gain === 0 ? '' : `volume=${gain.toFixed(2)}dB,`}${limiter},` +
        `${meter ? 'ebur128=framelog=verbose,' : ''}${TO_ENCODER}[mix]`,
    ].join(';');
  const pcm = Buffer.from(voice.samples.buffer, voice.samples.byteOffset, voice.samples.byteLength);
  // Three processes: the mix (music decoded, ducked, limited, metered) as 16-bit PCM into the AAC encoder, whose
  // packets a decoder hears for the true peak.
  const encodeMix = async (gain: number, meter: boolean): Promise<{ loudness: number; peak: number }> => {
    const mixer: Command = {
      command: ffmpeg.tools.ffmpeg,
      args: [
        '-nostdin', '-hide_banner', '-nostats', '-v', meter ? 'info' : 'error',
        '-probesize', '32', '-analyzeduration', '0', '-f', 's16le', '-ar', String(speech.sampleRate), '-ac', '1', '-i', 'pipe:0',
        // Looped for as long as the narration needs it.
        '-stream_loop', '-1', '-i', music.file,
        '-filter_complex', mix(gain, meter), '-map', '[mix]', '-map_metadata', '-1', '-f', 's16le', 'pipe:1',
      ],
    };
    const mixed = ['-f', 's16le', '-ar', String(VIDEO_SAMPLE_RATE), '-ac', String(channels), '-channel_layout', layout, '-i', 'pipe:0'];
    const peakMeter = new TruePeakMeter(channels);
    const [mixing] = await runPipeline([mixer, ...encodeAndHear(ffmpeg, mixed, [], { channels, output })], { ...limits, input: pcm, onStdout: (heard) => peakMeter.push(heard) });
    const stderr = mixing?.stderr ?? '';
    // ebur128 prints its summary at the info level as the run ends.
    const mixLoudness = meter ? Number(/I:\s+(-?[\d.]+) LUFS/.exec(stderr.slice(stderr.lastIndexOf('Summary:')))?.[1]) : Number.NaN;
    return { loudness: mixLoudness, peak: peakMeter.finish() + METER_MARGIN };
  };
  // No target: the voice keeps its level and alimiter holds the peaks where the music adds to them.
  if (loudness === undefined) {
    await encodeMix(0, false);
    return undefined;
  }
  const bedLoudness = musicLoudness + musicGain - (channels === 1 ? MONO_DOWNMIX : 0);
  let gain = Number.isFinite(musicLoudness) ? loudness - expectedMixLoudness(hopEnergies(voice.samples, speech.sampleRate), voice.gain, bedLoudness, channels) : 0;
  if (!Number.isFinite(gain)) gain = 0;
  for (let attempt = 0; ; attempt += 1) {
    const encoded = await encodeMix(gain, true);
    if (!Number.isFinite(encoded.loudness) || Math.abs(loudness - encoded.loudness) <= MIX_TOLERANCE || attempt === MIX_RETRIES) return encoded.peak;
    gain += loudness - encoded.loudness;
  }
}

/**
 * The last two stages of a soundtrack's pipeline: the AAC encoder, reading its input as `inputs` say, writing
 * its packets (ADTS) to `output` and to its stdout, and a decoder of those packets whose PCM (16-bit,
 * `channels` interleaved) is the file's sound as a player hears it, for its true peak.
 */
function encodeAndHear(ffmpeg: Ffmpeg, inputs: readonly string[], filters: readonly string[], { channels, output, cutoff }: { channels: Channels; output: string; cutoff?: number }): Command[] {
  const bandLimit = Math.min(AAC_CUTOFF, cutoff ?? AAC_CUTOFF);
  // The tee muxer gives both outputs the one encode; its output list is parsed with `|` between entries and `\` escaping.
  const teeOutputs = `[f=adts]file:${output.replace(/[\\'|[\]]/g, '\\$&')}|[f=adts]pipe:1`;
  return [
    {
      command: ffmpeg.tools.ffmpeg,
      args: [
        '-nostdin', '-hide_banner', '-nostats', '-v', 'error', ...inputs, ...filters,
        '-map', '0:a', '-ar', String(VIDEO_SAMPLE_RATE), '-ac', String(channels), '-map_metadata', '-1',
        // The videos' AAC, two of its options given again (ffmpeg takes the last): the band limit, and the tee muxer for its container.
        ...AUDIO_ENCODINGS.aac.args, '-cutoff', String(Math.round(bandLimit)), '-f', 'tee', teeOutputs,
      ],
    },
    { command: ffmpeg.tools.ffmpeg, args: ['-nostdin', '-hide_banner', '-v', 'error', '-f', 'aac', '-i', 'pipe:0', '-ac', String(channels), '-f', 's16le', 'pipe:1'] },
  ];
}

/** Passes of normalizeLoudness at most: each one after the first limits what the one before left short of the target. */
const LOUDNESS_PASSES = 3;
/** Short of the target by more than this after a pass: another pass. */
const PASS_TOLERANCE = 0.1;

/**
 * normalizeLoudness, passed again over its own output while that falls short of the target: its makeup gain is
 * bounded, and speech whose peaks stand far above its loudness (Piper's, 19-20 dB) ended up to 1.5 LU under -14 LUFS.
 */
function reachLoudness(samples: Int16Array, sampleRate: number, target: number, ceiling: number): { samples: Int16Array; gain: number } {
  let reached = { samples, gain: 0 };
  for (let pass = 0; pass < LOUDNESS_PASSES; pass += 1) {
    const next = normalizeLoudness(reached.samples, sampleRate, target - reached.gain, ceiling - reached.gain);
    const limited = next.samples !== reached.samples;
    reached = { samples: next.samples, gain: reached.gain + next.gain };
    // Unlimited, the gain alone meets the target exactly.
    if (!limited || Math.abs(target - (integratedLoudness(reached.samples, sampleRate) + reached.gain)) <= PASS_TOLERANCE) break;
  }
  return reached;
}

/** 16-bit samples times a gain in dB, as 32-bit floats (−1 to 1 at full scale) for ffmpeg's f32le. */
function floatPcm(samples: Int16Array, gain: number): Buffer {
  const scale = 10 ** (gain / 20) / 32768;
  const floats = new Float32Array(samples.length);
  for (let index = 0; index < samples.length; index += 1) floats[index] = (samples[index] ?? 0) * scale;
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);
}

/** dB a stereo music file loses mixed down to mono (ffmpeg halves each channel: channels alike lose 3 dB, unlike ones 6). */
const MONO_DOWNMIX = 3;
/**
 * dB per 100 ms hop that the ducker's level is taken to fall once the voice stops: a mean square with the release as
 * its time constant. Fitted, not derived (sidechaincompress's own constant is a quarter of it): of 72 mixes tried
 * (eSpeak NG and 220 Hz tone words, two music files, volume -12, -3 and 0, -14 and -23 LUFS, mono and stereo) the
 * first encode was kept in 42, against 33 with the filter's own constant; every default mix (-12 under -14 LUFS) in one.
 */
const DUCK_FALL = (10 * Math.log10(Math.E) * 100) / DUCK.releaseMs;

/**
 * The loudness the mix is expected to measure: the voice's own hops (samples before `voiceGain`, copied into each
 * channel) with the music bed's power added to each, lowered as the ducking lowers it (the voice's level over the
 * threshold, times 1 − 1/ratio, falling back at the release rate). The music's own ups and downs are not known here,
 * which is why the mix is metered as it is encoded.
 */
function expectedMixLoudness(voice: HopEnergies, voiceGain: number, bedLoudness: number, channels: Channels): number {
  const scale = 10 ** (voiceGain / 10);
  const bedEnergy = loudnessPower(bedLoudness) * voice.step;
  const threshold = 20 * Math.log10(DUCK.threshold);
  let level = -Infinity;
  const energies = voice.energies.map((energy) => {
    const voiced = energy * scale;
    level = Math.max(10 * Math.log10(voiced / voice.step), level - DUCK_FALL);
    const reduction = Math.max(0, level - threshold) * (1 - 1 / DUCK.ratio);
    return voiced * channels + bedEnergy * 10 ** (-reduction / 10);
  });
  return gatedLoudness({ ...voice, energies });
}

/**
 * The soundtrack written (encodeSoundtrack) with its true peak at most the ceiling: should a codec have lifted a peak
 * over it, written again with its peaks held lower, PEAK_RETRIES times at most.
 */
export async function encodeUnderCeiling(ffmpeg: Ffmpeg, options: SoundtrackOptions): Promise<void> {
  let ceiling = options.peakCeiling ?? peakCeilingFor('aac');
  for (let attempt = 0; ; attempt += 1) {
    const peak = await encodeSoundtrack(ffmpeg, { ...options, peakCeiling: ceiling });
    if (peak === undefined || peak <= TRUE_PEAK_CEILING || attempt === PEAK_RETRIES) return;
    ceiling = lowerCeiling(ceiling, peak);
  }
}

/** Integrated loudness of the music over what the video uses of it (decoded once, mono, 16 kHz). */
async function measureMusic(ffmpeg: Ffmpeg, file: string, seconds: number, limits: ProcessLimits): Promise<number> {
  const { stdout } = await runProcess(
    ffmpeg.tools.ffmpeg,
    ['-nostdin', '-v', 'error', '-stream_loop', '-1', '-i', file, '-map', '0:a:0', '-t', seconds.toFixed(3), '-ac', '1', '-ar', String(MEASURE_RATE), '-f', 's16le', 'pipe:1'],
    limits,
  );
  return integratedLoudness(new Int16Array(stdout.buffer, stdout.byteOffset, Math.floor(stdout.byteLength / 2)), MEASURE_RATE);
}
