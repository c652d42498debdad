import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngines, type EngineRegistry } from '../../src/engines/index.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { buildTestApp, type TestApp } from '../helpers/helpers.js';
import { fixture } from '../helpers/fixtures.js';

/** Log lines an engine registry wrote, by level. */
function recordingLog() {
  const lines: Array<{ level: 'warn' | 'info'; obj: object; msg: string }> = [];
  return {
    lines,
    warn: (obj: object, msg: string) => void lines.push({ level: 'warn', obj, msg }),
    info: (obj: object, msg: string) => void lines.push({ level: 'info', obj, msg }),
  };
}

describe('an engine whose host does not start', () => {
  const temp = useTempDir('voxreel-engine-start-');
  let engines: EngineRegistry | undefined;
  let app: TestApp | undefined;
  afterAll(async () => {
    await engines?.close();
    await app?.close();
    delete process.env.COUNT_FILE;
  });

  it('is tried twice, then left out in one log line, while the other engines serve', async () => {
    const countFile = path.join(temp, 'starts');
    process.env.COUNT_FILE = countFile;
    const log = recordingLog();
    engines = await createEngines({ poolSize: 1, startTimeoutMs: 15_000, hostModules: { 'espeak-ng': fixture('counted-hang.mjs') } }, log);

    expect(engines.unavailable()).toEqual([{ engine: 'espeak-ng', reason: expect.stringMatching(/did not start in time/) }]);
    expect((await readFile(countFile, 'utf8')).trim().split('\n')).toHaveLength(2);
    expect(log.lines.filter((line) => line.level === 'warn')).toEqual([
      { level: 'warn', obj: { engine: 'espeak-ng', reason: expect.any(String) }, msg: 'the espeak-ng engine could not start: its voices are unavailable for now' },
    ]);
    expect(engines.listVoices().some((voice) => voice.engine === 'espeak-ng')).toBe(false);
    const speech = await engines.synthesize('flite:slt', 'Still speaking.');
    expect(speech.samples.length).toBeGreaterThan(0);
  }, 90_000);

  it('is shown in GET /voices and /readyz, and the service stays ready', async () => {
    app = await buildTestApp({}, { engines });
    const voices = await app.app.inject({ method: 'GET', url: '/voices' });
    expect(voices.statusCode).toBe(200);
    expect(voices.json().unavailable).toEqual([{ engine: 'espeak-ng', reason: expect.any(String) }]);
    const ready = await app.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().unavailable).toEqual([{ engine: 'espeak-ng', reason: expect.any(String) }]);
    const tts = await app.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Hello.', voice: 'espeak-ng:en-us' } });
    expect(tts.statusCode).toBe(503);
    expect(tts.json().error.code).toBe('ENGINE_UNAVAILABLE');
    expect(tts.headers['retry-after']).toBe('30');
    const other = await app.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Hello.', voice: 'flite:slt', format: 'wav' } });
    expect(other.statusCode).toBe(200);
  });
});
