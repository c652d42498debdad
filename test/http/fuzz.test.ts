import { describe, expect, it } from 'vitest';
import { ErrorTable } from '../../src/errors.js';
import type { ErrorBody } from '../../src/api/errors.js';
import { randomBody, seeded } from '../helpers/fuzz.js';
import { useTestApp } from '../helpers/helpers.js';

const BODIES = 1000;

const t = useTestApp({ BODY_LIMIT_BYTES: '65536' });

const operations = {
  '/tts': {
    text: ['Hi.', 'A short test.'],
    voice: ['espeak-ng:en-us', 'flite:slt', 'espeak-ng:fr'],
    format: ['mp3', 'wav', 'ogg'],
    speed: [0.5, 1, 2],
  },
  '/tts-video': {
    text: ['Hi.', 'A short test.'],
    voice: ['espeak-ng:en-us', 'flite:slt'],
    resolution: ['720p', '1080p'],
    aspect_ratio: ['16:9', '9:16', '1:1'],
    subtitles: [true, false],
    fps: [24, 30, 60],
    frame_rate: ['constant', 'variable'],
  },
} as const;

describe('fuzzed bodies', () => {
  for (const [url, fields] of Object.entries(operations)) {
    it(`${url}: ${BODIES} hostile bodies, no 5xx, the documented error body, no file for a rejection`, async () => {
      const random = seeded(0x5eed);
      const statuses = new Map<number, number>();
      // A body the generator repeats is answered from the cache, with the same file.
      const published = new Set<string>();
      for (let i = 0; i < BODIES; i += 1) {
        const payload = randomBody(random, fields);
        const response = await t.app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } });
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        expect(response.statusCode, payload.slice(0, 300)).toBeLessThan(500);
        if (response.statusCode === 200) {
          published.add(response.json<{ url: string }>().url);
          continue;
        }
        const body = response.json<ErrorBody>();
        expect(body.status).toBe('error');
        expect(Object.keys(ErrorTable)).toContain(body.error.code);
        expect(ErrorTable[body.error.code as keyof typeof ErrorTable].status).toBe(response.statusCode);
        expect(typeof body.error.message).toBe('string');
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }
      const files = await t.listFiles();
      expect(files.filter((file) => file.startsWith('.tmp'))).toEqual([]);
      // Each operation writes its own kind of file (a video also its captions): exactly one per file answered.
      expect(files.filter((file) => file.startsWith(url === '/tts' ? 'audio/' : 'video/'))).toHaveLength(published.size);
      expect(published.size).toBeGreaterThan(10); // the generator also makes valid bodies, so acceptance is exercised
      expect(statuses.get(400) ?? 0).toBeGreaterThan(BODIES / 2);
    });
  }
});
