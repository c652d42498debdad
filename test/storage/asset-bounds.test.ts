// Issue 36, finding 10 (uploads): every frame of a clip held to ASSET_MAX_VIDEO_PIXELS, clips too small for any
// frame refused, the quota reserved atomically, a body cut before its closing boundary a client error, and a
// picture of one row accepted. Real files made by ffmpeg, real multipart bodies.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../src/api/errors.js';
import { multipartForm, useTestApp, type TestApp } from '../helpers/helpers.js';
import { runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';

const dir = useTempDir('voxreel-asset-bounds-');
const file = (name: string) => path.join(dir, name);

function upload(t: TestApp, content: Buffer, filename: string) {
  return t.app.inject({ method: 'POST', url: '/assets', ...multipartForm([{ name: 'file', filename, content }]) });
}

const h264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];

describe('uploads (issue 36, finding 10)', () => {
  const t = useTestApp({ ASSET_QUOTA_MB: '0.5', CLIENT_MAX_JOBS: '100', QUEUE_LENGTH: '100' });

  beforeAll(async () => {
    // 320×240 for a second, then 5760×5760 (33 Mpx, past the 8.3 Mpx default): MPEG-TS pieces joined, put in MP4 as they are.
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=s=320x240:r=10:d=1', ...h264, file('small.ts')]);
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=s=5760x5760:r=10:d=0.2', ...h264, file('huge.ts')]);
    await writeFile(file('joined.ts'), Buffer.concat([await readFile(file('small.ts')), await readFile(file('huge.ts'))]));
    await runFfmpeg(['-v', 'error', '-i', file('joined.ts'), '-c', 'copy', file('changes-size.mp4')]);
    for (const [width, height] of [[2, 2], [16, 2], [2, 64], [16, 16]]) {
      await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', `color=c=red:s=${width}x${height}:r=10:d=1`, ...h264, file(`clip-${width}x${height}.mp4`)]);
    }
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=s=3000x1', '-frames:v', '1', file('row.png')]);
    // Noise does not compress: about 176 KB a picture, so two fit in a quota of 512 KiB and a third does not.
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'nullsrc=s=400x300,format=rgb24,geq=r=random(1)*255:g=random(2)*255:b=random(3)*255', '-frames:v', '1', '-pix_fmt', 'rgb24', file('noise.png')]);
  }, 120_000);

  it('refuses a clip whose resolution changes mid-stream past the pixel limit (ffprobe sees only its first 320×240)', async () => {
    const response = await upload(t, await readFile(file('changes-size.mp4')), 'changes-size.mp4');
    expect(response.statusCode, response.body).toBe(413);
    expect(response.json<ErrorBody>().error).toMatchObject({ code: 'ASSET_TOO_LARGE', field: 'file', message: expect.stringContaining('5760×5760') });
  });

  it('refuses clips too small for any frame with 422, and takes one of 16×16', async () => {
    for (const size of ['2x2', '16x2', '2x64']) {
      const response = await upload(t, await readFile(file(`clip-${size}.mp4`)), `clip-${size}.mp4`);
      expect(response.statusCode, `${size}: ${response.body}`).toBe(422);
      expect(response.json<ErrorBody>().error).toMatchObject({ code: 'INVALID_ASSET', message: expect.stringContaining('at least 16 pixels') });
    }
    const fits = await upload(t, await readFile(file('clip-16x16.mp4')), 'clip-16x16.mp4');
    expect(fits.statusCode, fits.body).toBe(201);
    expect((await t.app.inject({ method: 'DELETE', url: `/assets/${fits.json<{ id: string }>().id}` })).statusCode).toBe(204);
  });

  it('accepts a valid 3000×1 PNG', async () => {
    const response = await upload(t, await readFile(file('row.png')), 'row.png');
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toMatchObject({ kind: 'image', width: 3000, height: 1 });
    expect((await t.app.inject({ method: 'DELETE', url: `/assets/${response.json<{ id: string }>().id}` })).statusCode).toBe(204);
  });

  it('answers a multipart body cut before its closing boundary with 400, not 507', async () => {
    const whole = multipartForm([{ name: 'file', filename: 'row.png', content: await readFile(file('row.png')) }]);
    const cut = whole.payload.subarray(0, whole.payload.length - 30);
    const response = await t.app.inject({ method: 'POST', url: '/assets', payload: cut, headers: whole.headers });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json<ErrorBody>().error).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/closing boundary|cut short/) });
  });

  it('reserves the quota atomically: of 12 uploads at once, a quota of 512 KiB keeps as many as it holds', async () => {
    const noise = await readFile(file('noise.png'));
    const fit = Math.floor((512 * 1024) / noise.length);
    expect(fit).toBeGreaterThanOrEqual(1);
    const answers = await Promise.all(Array.from({ length: 12 }, () => upload(t, noise, 'noise.png')));
    const statuses = answers.map((answer) => answer.statusCode);
    expect(statuses.filter((status) => status === 201)).toHaveLength(fit);
    expect(statuses.filter((status) => status === 507)).toHaveLength(12 - fit);
    const refused = answers.find((answer) => answer.statusCode === 507);
    expect(refused?.json<ErrorBody>().error.code).toBe('ASSET_QUOTA_EXCEEDED');
  });
});
