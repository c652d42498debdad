import { Readable } from 'node:stream';
import type { Ffmpeg } from '../media/ffmpeg.js';
import { limitsOf, runProcess, type ProcessLimits } from '../media/process.js';
import { AUDIO_ENCODINGS, encodedTruePeak, encodeSpeech, lowerCeiling, PEAK_RETRIES, peakCeilingFor } from '../speech/audio-encoding.js';
import { integratedLoudness, monoTarget, normalizeLoudness, TRUE_PEAK_CEILING } from '../speech/loudness.js';
import type { Speech } from '../speech/speech.js';
import { soundtrackChannels, type Channels } from './options.js';

export type { Channels } from './options.js';

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
  /** An AAC file (M4A). */
  output: string;
}

/** Fades of the music at the start and the end, in seconds (shorter for very short videos). */
const FADE_IN = 1;
const FADE_OUT = 2;
/** Music loudness is measured on at most this much of it, decoded at this rate. */
const MEASURE_RATE = 16_000;
/** dB a mix's true peak rose over the sample peak alimiter held (a 48 kHz mix of a 22 kHz voice and music). */
const INTER_SAMPLE_RISE = 1;
/** Ducking: the voice (the side chain) pulls the music down by up to about 15 dB while it speaks. */
const DUCKING = 'sidechaincompress=threshold=0.02:ratio=8:attack=20:release=400';
/** dB the mix is lowered by on its way here as 16-bit samples, so that the music over the voice's peaks never clips. */
const MIX_HEADROOM = 6;

/**
 * The audio of a video: the narration at 48 kHz brought to the loudness target, and with `music` the music under it,
 * looped or cut to length, faded in and out, ducked while the voice speaks. With music and a target, the mix is
 * made first (without the AAC encode), measured and limited here, and encoded with the gain that brings the whole of
 * it (not the voice alone) to the target: the music and the ducking change the loudness, and a limiter after the
 * target would take some back.
 */
export async function encodeSoundtrack(ffmpeg: Ffmpeg, options: SoundtrackOptions): Promise<void> {
  const { speech, loudness, music, output } = options;
  const limits = limitsOf(options);
  const channels = soundtrackChannels(options.channels, music !== undefined);
  const peakCeiling = options.peakCeiling ?? peakCeilingFor('aac');
  if (!music) {
    return encodeSpeech(ffmpeg, speech, { encoding: 'aac', speed: 1, sampleRate: VIDEO_SAMPLE_RATE, channels, loudness, peakCeiling, checkPeak: false, output, ...limits });
  }

  // ffmpeg decodes the music while the voice is measured here. The voice is brought near the target on its own first,
  // at its own rate, where its limiter costs least; the mix is then measured and corrected (a few tenths of a dB).
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
  // In stereo the voice is in both channels alike (centred), the music keeps its own stereo image.
  const mix = [
    `[0:a]volume=${voice.gain.toFixed(2)}dB,aresample=${VIDEO_SAMPLE_RATE},aformat=sample_fmts=fltp:channel_layouts=mono,asplit=2[voice][key]`,
    `[1:a]aresample=${VIDEO_SAMPLE_RATE},aformat=sample_fmts=fltp:channel_layouts=${layout},volume=${musicGain.toFixed(2)}dB,atrim=0:${seconds.toFixed(3)},` +
      `afade=t=in:d=${fadeIn.toFixed(3)},afade=t=out:st=${(seconds - fadeOut).toFixed(3)}:d=${fadeOut.toFixed(3)}[bed]`,
    `[bed][key]${DUCKING}[ducked]`,
    `[voice]${channels === 2 ? 'pan=stereo|c0=c0|c1=c0' : 'anull'}[centred]`,
    '[centred][ducked]amix=inputs=2:duration=first:normalize=0',
  ].join(';');
  const pcm = Buffer.from(voice.samples.buffer, voice.samples.byteOffset, voice.samples.byteLength);
  const voiceInput = ['-probesize', '32', '-analyzeduration', '0', '-f', 's16le', '-ar', String(speech.sampleRate), '-ac', '1'];
  if (loudness === undefined) {
    // No target: the voice keeps its level and alimiter holds the peaks where the music adds to them, in one run.
    // alimiter holds sample peaks; between samples the mix still rises about 1 dB higher (measured), so it aims that much lower.
    const ceiling = 10 ** ((peakCeiling - INTER_SAMPLE_RISE) / 20);
    return ffmpeg.run({
      inputs: [
        { source: Readable.from([pcm]), options: voiceInput },
        // Looped for as long as the narration needs it.
        { source: music.file, options: ['-stream_loop', '-1'] },
      ],
      complexFilter: `${mix},alimiter=limit=${ceiling.toFixed(4)}:level=false:latency=true:attack=5:release=50[mix]`,
      output,
      outputOptions: ['-map', '[mix]', '-map_metadata', '-1', ...AUDIO_ENCODINGS.aac.args],
      ...limits,
    });
  }
  const { stdout } = await runProcess(
    ffmpeg.tools.ffmpeg,
    [
      '-nostdin', '-v', 'error', ...voiceInput, '-i', 'pipe:0', '-stream_loop', '-1', '-i', music.file,
      '-filter_complex', `${mix},volume=-${MIX_HEADROOM}dB[mix]`, '-map', '[mix]', '-c:a', 'pcm_s16le', '-f', 's16le', 'pipe:1',
    ],
    { ...limits, input: pcm },
  );
  const mixed = new Int16Array(stdout.buffer, stdout.byteOffset, Math.floor(stdout.byteLength / 2));
  const { samples, gain } = normalizeLoudness(mixed, VIDEO_SAMPLE_RATE, loudness, peakCeiling, channels);
  await ffmpeg.run({
    inputs: [{ source: Readable.from([Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength)]), options: ['-probesize', '32', '-analyzeduration', '0', '-f', 's16le', '-ar', String(VIDEO_SAMPLE_RATE), '-ac', String(channels)] }],
    output,
    outputOptions: [...(gain === 0 ? [] : ['-af', `volume=${gain.toFixed(2)}dB`]), '-map_metadata', '-1', ...AUDIO_ENCODINGS.aac.args],
    ...limits,
  });
}

/**
 * A written soundtrack's true peak, read while other work goes on (`encodedTruePeak`); undefined without a loudness
 * target, when nothing is promised of the peaks.
 */
export async function soundtrackPeak(ffmpeg: Ffmpeg, options: SoundtrackOptions): Promise<number | undefined> {
  if (options.loudness === undefined) return undefined;
  return encodedTruePeak(ffmpeg, options.output, limitsOf(options), soundtrackChannels(options.channels, options.music !== undefined));
}

/**
 * Runs `use` (the mux) once the soundtrack's `peak` (soundtrackPeak, started as soon as it was written) is known to be
 * at most the ceiling, or beside it; should a peak have come out over the ceiling (a codec lifts some), writes the
 * soundtrack again with its peaks held lower and runs `use` again.
 */
export async function keepUnderCeiling<T>(ffmpeg: Ffmpeg, options: SoundtrackOptions, peak: Promise<number | undefined>, use: () => Promise<T>): Promise<T> {
  let ceiling = options.peakCeiling ?? peakCeilingFor('aac');
  let checked = peak;
  for (let attempt = 0; ; attempt += 1) {
    const [result, measured] = await Promise.all([use(), checked]);
    if (measured === undefined || measured <= TRUE_PEAK_CEILING || attempt === PEAK_RETRIES) return result;
    ceiling = lowerCeiling(ceiling, measured);
    await encodeSoundtrack(ffmpeg, { ...options, peakCeiling: ceiling });
    checked = soundtrackPeak(ffmpeg, options);
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
