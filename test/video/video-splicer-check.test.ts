import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TtsVideoResponse } from '../../src/api/video.js';
import { Ffmpeg } from '../../src/media/ffmpeg.js';
import { checkSplicing, composeStream, H264Error, SplicerCheck, splitNalUnits, type Splice, type StreamParts } from '../../src/video/h264/index.js';
import { PICTURE } from '../../src/video/render.js';
import { spliceSample } from '../../src/video/splice-sample.js';
import { useTestApp } from '../helpers/helpers.js';
import { ffmpeg, rawStreams } from '../helpers/media.js';

/** A copy of `stream` whose IDR slices have bytes flipped past their middle: the headers still parse, the macroblocks do not. */
function corruptIdrSlices(stream: Uint8Array): Uint8Array {
  const copy = Uint8Array.from(stream);
  for (const nal of splitNalUnits(copy)) {
    if (((nal[0] as number) & 0x1f) !== 5) continue;
    for (let i = Math.floor(nal.length / 2); i < nal.length - 2; i += 7) nal[i] = (nal[i] as number) ^ 0x5a;
  }
  return copy;
}

const withCorruptBand: Splice = (parts: StreamParts) => composeStream({ ...parts, band: parts.band && { ...parts.band, stream: corruptIdrSlices(parts.band.stream) } });
const refusing: Splice = () => {
  throw new H264Error('refused on purpose');
};

describe('checkSplicing', () => {
  it("passes with this machine's ffmpeg and x264", async () => {
    expect(await checkSplicing(ffmpeg, PICTURE, spliceSample)).toEqual({ ok: true });
  });

  it('fails when a part is corrupted: the spliced stream no longer decodes without errors', async () => {
    const check = await checkSplicing(ffmpeg, PICTURE, spliceSample, { splice: withCorruptBand });
    expect(check.ok).toBe(false);
    expect(check.reason).toMatch(/does not decode/);
  });

  it('fails when the spliced stream decodes but does not show the captions where they change', async () => {
    const check = await checkSplicing(ffmpeg, PICTURE, spliceSample, { splice: (parts) => composeStream({ ...parts, band: undefined }) });
    expect(check).toMatchObject({ ok: false, reason: expect.stringMatching(/changes at frames \[\], the captions at \[\d/) });
  });

  it('fails, without throwing, when the splicer refuses the parts', async () => {
    const check = await checkSplicing(ffmpeg, PICTURE, spliceSample, { splice: refusing });
    expect(check).toMatchObject({ ok: false, reason: 'refused on purpose' });
    expect(check.cause).toBeInstanceOf(H264Error);
  });

  it('fails, without throwing, when ffmpeg cannot be run', async () => {
    const missing = new Ffmpeg({ ffmpeg: '/nonexistent/ffmpeg', ffprobe: '/nonexistent/ffprobe' });
    expect(await checkSplicing(missing, PICTURE, spliceSample)).toMatchObject({ ok: false });
  });
});

describe('SplicerCheck', () => {
  it('runs the check once, on the first ask, and keeps its answer', async () => {
    let splices = 0;
    const check = new SplicerCheck(ffmpeg, PICTURE, spliceSample, {
      splice: (parts) => {
        splices += 1;
        return composeStream(parts);
      },
    });
    expect(check.passed).toBeUndefined();
    const [first, second] = await Promise.all([check.works(), check.works()]);
    expect([first, second, await check.works(), check.passed]).toEqual([true, true, true, true]);
    expect(splices).toBe(2); // one constant-rate and one variable-rate stream, once
  });
});

describe('the service', () => {
  describe('with a working splicer', () => {
    const t = useTestApp();
    it('/readyz shows the splicer check once it has run (in the background, after the warm-up)', async () => {
      await t.app.splicer.run();
      const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toMatchObject({ status: 'ok', checks: { splicer: true } });
    });
  });

  describe('with a splicer that fails its start-up check', () => {
    const t = useTestApp({}, { splicer: new SplicerCheck(ffmpeg, PICTURE, spliceSample, { splice: refusing }) });

    it('/readyz shows splicer: false and the service stays ready', async () => {
      await t.app.splicer.run();
      const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(200);
      // Besides these, what Piper's voices run on (onnxruntime, phonemes) where they are installed: operations.test.ts.
      const body = ready.json<{ status: string; checks: Record<string, boolean> }>();
      expect({ status: body.status, checks: body.checks }).toEqual({ status: 'ok', checks: { voices: true, warm: true, ffmpeg: true, outputWritable: true, diskSpace: true, splicer: false } });
    });

    it('still makes videos, the plain way', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/tts-video',
        payload: { text: 'Made without the splicer.', voice: 'espeak-ng:en-us', resolution: '720p', aspect_ratio: '1:1', frame_rate: 'variable' },
      });
      expect(response.statusCode, response.body).toBe(200);
      const body = response.json<TtsVideoResponse>();
      const [video, audio] = await rawStreams(path.join(t.outputDir, body.url.slice(t.config.cdnUrl.length + 1)));
      expect(video).toMatchObject({ codec_name: 'h264', pix_fmt: 'yuv420p', width: 720, height: 720 });
      expect(audio).toMatchObject({ codec_name: 'aac' });
      expect(Math.abs(Number(video?.duration) - body.duration)).toBeLessThan(0.05);
    });
  });
});
