import { rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/helpers.js';

const VOICE = 'espeak-ng:en-us';

async function metric(app: ReturnType<typeof useTestApp>['app'], line: string): Promise<number> {
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  const found = text.split('\n').find((row) => row.startsWith(line));
  return found ? Number(found.slice(line.length).trim()) : 0;
}

describe('the request cache', () => {
  const test = useTestApp({ PRICE_CACHE_HIT_FACTOR: '0.5' });

  it('answers an identical request with the earlier file, marked cached, at the price of a hit', async () => {
    const body = { text: 'Say  this once.', voice: VOICE, format: 'ogg', speed: 1.25 };
    const first = await test.app.inject({ method: 'POST', url: '/tts', payload: body });
    const again = await test.app.inject({ method: 'POST', url: '/tts', payload: { ...body, text: 'Say this once. ' } });
    expect(first.statusCode).toBe(200);
    expect(again.statusCode).toBe(200);
    const [one, two] = [first.json(), again.json()];
    expect(one.cached).toBe(false);
    expect(two).toMatchObject({ cached: true, url: one.url, duration: one.duration, bytes: one.bytes, cost: Math.round(one.cost * 0.5 * 1e6) / 1e6 });
    const files = (await test.listFiles()).filter((file) => file.startsWith('audio/'));
    expect(files).toHaveLength(1);
    expect(await metric(test.app, 'voxreel_cache_requests_total{operation="tts",result="hit"}')).toBe(1);
    expect(await metric(test.app, 'voxreel_cache_requests_total{operation="tts",result="miss"}')).toBe(1);
  });

  it('makes a new file for any other option, and again once the earlier file is gone', async () => {
    const body = { text: 'Cached until deleted.', voice: VOICE };
    const first = (await test.app.inject({ method: 'POST', url: '/tts', payload: body })).json();
    const otherSpeed = (await test.app.inject({ method: 'POST', url: '/tts', payload: { ...body, speed: 1.5 } })).json();
    expect(otherSpeed).toMatchObject({ cached: false });
    expect(otherSpeed.url).not.toBe(first.url);
    await rm(path.join(test.outputDir, new URL(first.url).pathname.replace(/^\/files\//, '')));
    const remade = (await test.app.inject({ method: 'POST', url: '/tts', payload: body })).json();
    expect(remade.cached).toBe(false);
    expect(remade.url).not.toBe(first.url);
    expect((await test.fetchFile(remade.url)).statusCode).toBe(200);
  });

  it('caches videos with their captions; an async request for a cached result is a job done at once', async () => {
    const body = { text: 'A cached video.', voice: VOICE, resolution: '720p', aspect_ratio: '1:1' };
    const first = (await test.app.inject({ method: 'POST', url: '/tts-video', payload: body })).json();
    const again = await test.app.inject({ method: 'POST', url: '/tts-video', payload: { ...body, async: true } });
    expect(again.statusCode).toBe(202);
    // Said as it is: the job is done already.
    expect(again.json()).toMatchObject({ status: 'accepted', state: 'succeeded' });
    const job = (await test.app.inject({ method: 'GET', url: again.headers.location as string })).json();
    expect(job).toMatchObject({ state: 'succeeded', result: { cached: true, url: first.url, captionsUrl: first.captionsUrl } });
    const otherLook = (await test.app.inject({ method: 'POST', url: '/tts-video', payload: { ...body, caption_style: 'bold' } })).json();
    expect(otherLook.cached).toBe(false);
  });
});
