import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MediaInfo } from '../../src/media/ffmpeg.js';
import { mp4Info } from '../../src/media/mp4-info.js';
import { probe, runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';

const dir = useTempDir('voxreel-mp4-info-');

/** ffprobe's answer without the pixel format (which the moov box does not say) and with keys in one order. */
function comparable(info: MediaInfo): unknown {
  return {
    formatName: info.formatName,
    size: info.size,
    duration: info.duration,
    streams: info.streams.map(({ index, codecType, codecName, duration, width, height, sampleRate, channels }) => ({ index, codecType, codecName, duration, width, height, sampleRate, channels })),
  };
}

describe('mp4Info reads what ffprobe reads of an MP4, from its moov box alone', () => {
  it.each([
    ['H.264 and mono AAC at 48 kHz, moov first', { size: '1080x1920', rate: 30, seconds: 2.5, channels: 1, sampleRate: 48000, faststart: true }],
    ['H.264 and stereo AAC at 44.1 kHz, moov last', { size: '1280x720', rate: 25, seconds: 1.7, channels: 2, sampleRate: 44100, faststart: false }],
    ['H.264 alone', { size: '640x360', rate: 24, seconds: 3, channels: 0, sampleRate: 0, faststart: true }],
  ])('%s', async (_label, { size, rate, seconds, channels, sampleRate, faststart }) => {
    const output = path.join(dir, `${size}-${channels}.mp4`);
    const audio = channels ? ['-f', 'lavfi', '-i', `sine=f=300:r=${sampleRate}:d=${seconds}`] : [];
    await runFfmpeg([
      '-nostdin', '-v', 'error', '-y',
      '-f', 'lavfi', '-i', `testsrc2=s=${size}:r=${rate}:d=${seconds}`, ...audio,
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p',
      ...(channels ? ['-ac', String(channels), '-c:a', 'aac', '-b:a', '96k'] : []),
      ...(faststart ? ['-movflags', '+faststart'] : []), '-f', 'mp4', output,
    ]);
    const ours = await mp4Info(output);
    expect(comparable(ours)).toEqual(comparable(await probe(output)));
    expect(ours.streams.map((stream) => stream.codecName)).toEqual(channels ? ['h264', 'aac'] : ['h264']);
  });

  it('refuses a file without a moov box', async () => {
    const output = path.join(dir, 'not-mp4.mp4');
    await writeFile(output, Buffer.from('\x00\x00\x00\x10ftypisom\x00\x00\x00\x00 and then nothing', 'latin1'));
    await expect(mp4Info(output)).rejects.toThrow(/no moov box/);
  });
});
