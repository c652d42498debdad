import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Ffmpeg, type FfmpegJob } from '../../src/media/ffmpeg.js';
import { WarmEncoders } from '../../src/speech/audio-encoding.js';
import { ffmpeg, ffmpegPids, probe } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';

const dir = useTempDir('voxreel-encoding-');

describe('WarmEncoders', () => {
  it('keeps an encoder ready for the next stream, and stops it on close', async () => {
    const counting = new Ffmpeg(ffmpeg.tools);
    let runs = 0;
    const run = counting.run.bind(counting);
    counting.run = (job: FfmpegJob) => {
      runs += 1;
      return run(job);
    };
    const encoders = new WarmEncoders(counting);
    const second = Buffer.from(Int16Array.from({ length: 22_050 }, (_, i) => Math.round(8000 * Math.sin(i / 7))).buffer);
    const encode = (file: string) => {
      const output = new PassThrough();
      const chunks: Buffer[] = [];
      output.on('data', (chunk: Buffer) => chunks.push(chunk));
      const encoded = encoders.encode(Readable.from([second]), 22_050, { encoding: 'mp3', speed: 1, sampleRate: 24_000, output });
      return { encoded, written: encoded.then(() => writeFile(path.join(dir, file), Buffer.concat(chunks))) };
    };
    await encode('first.mp3').written;
    await expect.poll(() => runs).toBe(2); // the spare, started once the first gave bytes
    const next = encode('second.mp3');
    expect(runs).toBe(2); // no ffmpeg started for it: it runs on the spare
    await next.written;
    for (const file of ['first.mp3', 'second.mp3']) {
      const info = await probe(path.join(dir, file));
      expect(info.streams[0]?.sampleRate).toBe(24_000);
      expect(Math.abs(info.duration - 1)).toBeLessThan(0.1);
    }
    await expect.poll(() => runs).toBe(3);
    // Both encodes are over: the one ffmpeg left is the new spare.
    await expect.poll(ffmpegPids).toHaveLength(1);
    encoders.close();
    await expect.poll(ffmpegPids, { timeout: 5000 }).toEqual([]);
  });
});
