// Issue 25: the Wyoming protocol (Home Assistant), tested with the real client: PyPI wyoming 1.10.2, installed with
// the tests' Python tools (script/install-judge).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWyoming, type WyomingServer } from '../../src/http/wyoming/server.js';
import { EventReader, encodeEvent, LIMITS, type WyomingEvent } from '../../src/http/wyoming/events.js';
import { announceWyoming } from '../../src/http/wyoming/zeroconf.js';
import { useTestApp } from '../helpers/helpers.js';
import { JUDGE_DIR } from '../helpers/judge.js';

const PYTHON = path.join(JUDGE_DIR, 'bin', 'python');
const CLIENT = path.join(import.meta.dirname, '..', 'helpers', 'wyoming_client.py');
const DISCOVER = path.join(import.meta.dirname, '..', 'helpers', 'wyoming_discover.py');
const installed = existsSync(PYTHON) || Boolean(process.env.CI);

/** The events a chunk completes. */
function push(reader: EventReader, chunk: Buffer): WyomingEvent[] {
  reader.write(chunk);
  const events: WyomingEvent[] = [];
  for (let event = reader.next(); event; event = reader.next()) events.push(event);
  return events;
}

describe('Wyoming framing', () => {
  it('reads events split anywhere, with their data and payload, and writes them as the Python library does', () => {
    const bytes = Buffer.concat([encodeEvent('audio-chunk', { rate: 22050, width: 2, channels: 1 }, Buffer.alloc(10, 7)), encodeEvent('describe')]);
    const reader = new EventReader();
    const events = [...bytes].flatMap((byte) => push(reader, Buffer.of(byte)));
    expect(events.map((event) => event.type)).toEqual(['audio-chunk', 'describe']);
    expect(events[0]?.data).toEqual({ rate: 22050, width: 2, channels: 1 });
    expect(events[0]?.payload?.length).toBe(10);
  });

  it('refuses a header line, data or payload past its bound, and what is not JSON', () => {
    expect(() => push(new EventReader(), Buffer.alloc(LIMITS.line + 1, 0x61))).toThrow(/header line/);
    expect(() => push(new EventReader(), Buffer.from(`{"type":"x","payload_length":${LIMITS.payload + 1}}\n`))).toThrow(/payload_length/);
    expect(() => push(new EventReader(), Buffer.from('{"type":"x","data_length":-1}\n'))).toThrow(/not a length/);
    expect(() => push(new EventReader(), Buffer.from('[1,2]\n'))).toThrow(/not a JSON object/);
  });
});

describe.runIf(installed)('Wyoming server with the real client (wyoming 1.10.2)', () => {
  const t = useTestApp();
  let server: WyomingServer;

  beforeAll(async () => {
    server = await startWyoming(t.app, { ...t.config.wyoming, port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('describes every voice, speaks with two voices, streams, and answers garbage with an error and a closed connection', async () => {
    const voiceB = t.app.engines.findVoice('piper:en_US-joe-medium') ? 'piper:en_US-joe-medium' : 'espeak-ng:en-gb';
    const { stdout } = await promisify(execFile)(PYTHON, [CLIENT, '127.0.0.1', String(server.port), 'espeak-ng:en-us', voiceB], { timeout: 120_000 });
    const result = JSON.parse(stdout);
    expect(result.voices).toEqual(t.app.engines.listVoices().map((voice) => voice.id));
    expect(result.streaming).toBe(true);
    for (const voice of ['espeak-ng:en-us', voiceB]) {
      const spoken = result[voice];
      expect(spoken.types[0]).toBe('audio-start');
      expect(spoken.types.at(-1)).toBe('audio-stop');
      expect(spoken.types.filter((type: string) => type === 'audio-chunk').length).toBeGreaterThan(3);
      expect(spoken.rate).toBe(t.app.engines.findVoice(voice)?.sampleRate);
      expect(spoken.seconds).toBeGreaterThan(1.5);
    }
    expect(result.unknown.error.code).toBe('UNKNOWN_VOICE');
    expect(result.before_stop).toBe('audio-start');
    expect(result.streamed.types[0]).toBe('audio-chunk');
    expect(result.streamed.types.slice(-2)).toEqual(['audio-stop', 'synthesize-stopped']);
    expect(result.streamed.seconds).toBeGreaterThan(3);
    expect(result.after).toBe('info');
    expect(result.garbage.closed).toBe(true);
    const [line] = String(result.garbage.answer).split('\n');
    expect(JSON.parse(line as string)).toMatchObject({ type: 'error' });
  });
});

describe.runIf(installed)('Wyoming server announced by zeroconf, found as Home Assistant finds it (python-zeroconf, then describe)', () => {
  const t = useTestApp();

  it('is found on the loopback interface under its name at its port and address, answers describe there, and is gone after it closes', async () => {
    // A name of this run's own, so that another server on the machine is never taken for it.
    const name = `voxreel test ${process.pid}`;
    const server = await startWyoming(t.app, { ...t.config.wyoming, port: 0, host: '127.0.0.1', zeroconf: name });
    const discover = async (seconds: number) => JSON.parse((await promisify(execFile)(PYTHON, [DISCOVER, '127.0.0.1', name, String(seconds)], { timeout: 60_000 })).stdout);
    try {
      expect(server.zeroconf?.address).toBe('127.0.0.1');
      const found = await discover(10);
      expect(found).toMatchObject({ found: true, resolved: true, port: server.port, addresses: ['127.0.0.1'], server: 'voxreel-test-' + process.pid + '.local.' });
      expect(found.tts).toEqual({ name: 'voxreel', voices: t.app.engines.listVoices().length });
    } finally {
      await server.close();
    }
    // Said goodbye and stopped answering: a new browser finds nothing.
    expect(await discover(3)).toEqual({ found: false });
  }, 90_000);

  it('fails at once, rather than waiting for ever, where the mDNS socket cannot start (an interface this machine lacks)', async () => {
    const started = Date.now();
    await expect(announceWyoming({ name: 'nowhere', port: 10200, host: '192.0.2.250', log: t.app.log })).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
