import { Readable } from 'node:stream';
import type { Ffmpeg } from './ffmpeg.js';
import type { Speech } from './pcm.js';
import type { ProcessLimits } from './process.js';

/** Containers and codecs we write; `aac` is internal (the soundtrack of videos). */
export const AUDIO_ENCODINGS = {
  mp3: { extension: 'mp3', contentType: 'audio/mpeg', args: ['-c:a', 'libmp3lame', '-b:a', '64k', '-f', 'mp3'] },
  wav: { extension: 'wav', contentType: 'audio/wav', args: ['-c:a', 'pcm_s16le', '-f', 'wav'] },
  ogg: { extension: 'ogg', contentType: 'audio/ogg', args: ['-c:a', 'libvorbis', '-q:a', '4', '-f', 'ogg'] },
  aac: { extension: 'm4a', contentType: 'audio/mp4', args: ['-c:a', 'aac', '-aac_coder', 'fast', '-b:a', '96k', '-f', 'ipod'] },
} as const;
export type AudioEncoding = keyof typeof AUDIO_ENCODINGS;

export interface EncodeOptions extends ProcessLimits {
  encoding: AudioEncoding;
  /** Playback speed, 0.5 to 2 (atempo keeps the pitch). */
  speed: number;
  output: string;
}

/** Writes the speech, at the given speed, to `output` in one ffmpeg run fed through stdin. */
export function encodeSpeech(ffmpeg: Ffmpeg, speech: Speech, options: EncodeOptions): Promise<void> {
  const pcm = Buffer.from(speech.samples.buffer, speech.samples.byteOffset, speech.samples.byteLength);
  return ffmpeg.run({
    inputs: [
      {
        source: Readable.from([pcm]),
        options: ['-f', 's16le', '-ar', String(speech.sampleRate), '-ac', '1'],
      },
    ],
    output: options.output,
    outputOptions: [
      ...(options.speed === 1 ? [] : ['-af', `atempo=${options.speed}`]),
      '-map_metadata',
      '-1',
      ...AUDIO_ENCODINGS[options.encoding].args,
    ],
    signal: options.signal,
    timeoutMs: options.timeoutMs,
  });
}
