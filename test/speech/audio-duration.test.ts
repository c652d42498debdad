import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { audioDuration } from '../../src/speech/audio-duration.js';
import { AUDIO_ENCODINGS } from '../../src/speech/audio-encoding.js';
import { ffmpeg, probe } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';

const dir = useTempDir('voxreel-duration-');

describe('audioDuration reads what ffprobe reads, from the header alone', () => {
  const formats = ['mp3', 'wav', 'ogg'] as const;
  for (const format of formats) {
    it.each([
      [16000, 1, 0.3],
      [22050, 0.5, 1.7],
      [32000, 1.3, 11.3],
      [22050, 2, 4.2],
    ])(`${format}: %i Hz at speed %f, %f s`, async (rate, speed, seconds) => {
      const output = path.join(dir, `tone-${rate}-${speed}-${seconds}.${format}`);
      await ffmpeg.run({
        inputs: [{ source: `sine=f=300:r=${rate}:d=${seconds}`, options: ['-f', 'lavfi'] }],
        output,
        outputOptions: [...(speed === 1 ? [] : ['-af', `atempo=${speed}`]), '-map_metadata', '-1', ...AUDIO_ENCODINGS[format].args],
      });
      const fromProbe = (await probe(output)).duration;
      expect(Math.abs((await audioDuration(output, format)) - fromProbe)).toBeLessThan(0.001);
    });
  }

  it('refuses a file that is not what it claims', async () => {
    const output = path.join(dir, 'not-audio.mp3');
    await writeFile(output, 'no audio here');
    await expect(audioDuration(output, 'mp3')).rejects.toThrow(/no duration/);
  });
});
