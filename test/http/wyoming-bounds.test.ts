// Issue 36: Wyoming bounded as an HTTP server is, tried against the API as a real process: clients that never read,
// floods of over-long and of valid events, `describe` amplification, half-sent and idle connections, too many
// connections from one address; meanwhile /healthz answers and the process's memory stays put; SIGTERM ends it.
import { readFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeEvent, EventReader, type WyomingEvent } from '../../src/http/wyoming/events.js';
import { startServer, type RunningServer } from '../helpers/server-process.js';

const VOICE = 'espeak-ng:en-us';
const WRITE_TIMEOUT_MS = 2000;
const HEADER_TIMEOUT_MS = 1000;
const IDLE_TIMEOUT_MS = 4000;
const PER_ADDRESS = 6;
const CONNECTIONS_PER_SECOND = 20;
const FLOOD_MS = 10_000;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 0;
}

/** A raw Wyoming client: what it reads (unless it never reads), and when it saw the connection closed. */
interface Client {
  socket: Socket;
  events: WyomingEvent[];
  closed: Promise<number>;
}

/** Whether a client that never read was cut off: reading now, it comes to the end of what was sent, then the close. */
async function cutOff(each: Client): Promise<boolean> {
  each.socket.on('data', () => undefined);
  each.socket.resume();
  return (await within(each.closed, 3000)) !== 'timeout';
}

let port = 0;

async function client(options: { reads: boolean } = { reads: true }): Promise<Client> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => undefined);
  const events: WyomingEvent[] = [];
  if (options.reads) {
    const reader = new EventReader({ line: 1 << 20, bounds: () => ({ data: 1 << 20, payload: 1 << 20 }) });
    socket.on('data', (chunk: Buffer) => {
      reader.write(chunk);
      for (let event = reader.next(); event; event = reader.next()) events.push(event);
    });
  } else socket.pause();
  const opened = performance.now();
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now() - opened)));
  return { socket, events, closed };
}

const synthesize = (text: string) => encodeEvent('synthesize', { text, voice: { name: VOICE } });
const words = (characters: number) => 'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(characters / 45)).slice(0, characters);

async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  return Promise.race([promise, sleep(ms, 'timeout' as const)]);
}

function rssMb(pid: number): number {
  return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}

describe('Wyoming bounds, against the API as a real process', () => {
  let server: RunningServer;
  const DISCONNECTED = 'Wyoming client read nothing in time: disconnected';
  const logged = (message: string) => server.logs.filter((line) => line.msg === message);
  /** Waits until the server has logged `message` `count` times in all, or `ms` passed; the lines. */
  async function untilLogged(message: string, count: number, ms: number): Promise<Array<Record<string, unknown>>> {
    const deadline = performance.now() + ms;
    while (logged(message).length < count && performance.now() < deadline) await sleep(50);
    return logged(message);
  }

  beforeAll(async () => {
    port = await freePort();
    server = await startServer({
      WYOMING_PORT: String(port),
      CONCURRENCY: '2',
      WYOMING_WRITE_TIMEOUT_MS: String(WRITE_TIMEOUT_MS),
      WYOMING_HEADER_TIMEOUT_MS: String(HEADER_TIMEOUT_MS),
      WYOMING_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
      WYOMING_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
      WYOMING_CONNECTIONS_PER_SECOND: String(CONNECTIONS_PER_SECOND),
    });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('refuses an over-long text before audio-start: from its declared length without reading the rest, or once parsed; what was queued is dropped', async () => {
    const declared = await client();
    // Only the header of a 60,000-character synthesize: the refusal cannot have waited for its data.
    declared.socket.write(`${JSON.stringify({ type: 'synthesize', version: '1.10.2', data_length: 60_020 })}\n`);
    expect(await within(declared.closed, 3000)).not.toBe('timeout');
    expect(declared.events.map((event) => [event.type, event.data.code])).toEqual([['error', 'too-long']]);

    const parsed = await client();
    parsed.socket.write(synthesize(words(6000)));
    expect(await within(parsed.closed, 3000)).not.toBe('timeout');
    expect(parsed.events.map((event) => [event.type, event.data.code])).toEqual([['error', 'too-long']]);

    // A synthesis, two events queued behind it, then one refused: neither queued event is answered.
    const queued = await client();
    queued.socket.write(Buffer.concat([synthesize(words(400)), encodeEvent('describe'), encodeEvent('ping'), encodeEvent('transcribe')]));
    expect(await within(queued.closed, 5000)).not.toBe('timeout');
    const types = queued.events.map((event) => event.type);
    expect(types.at(-1)).toBe('error');
    expect(queued.events.at(-1)?.data.code).toBe('unsupported-event');
    expect(types).not.toContain('info');
    expect(types).not.toContain('pong');
  });

  it('closes connections that send no whole event within the header timeout, and idle ones after the idle timeout', async () => {
    const silent = await client();
    const halfHeader = await client();
    halfHeader.socket.write('{"type":"describe","ver');
    const halfData = await client();
    halfData.socket.write(`${JSON.stringify({ type: 'synthesize', data_length: 200 })}\n{"text":"Hel`);
    const idle = await client();
    idle.socket.write(encodeEvent('describe'));
    const [a, b, c] = await Promise.all([silent, halfHeader, halfData].map((each) => within(each.closed, HEADER_TIMEOUT_MS + 3000)));
    for (const [each, ms] of [[silent, a], [halfHeader, b], [halfData, c]] as const) {
      expect(ms).not.toBe('timeout');
      expect(ms).toBeGreaterThanOrEqual(HEADER_TIMEOUT_MS - 50);
      expect(each.events.map((event) => [event.type, event.data.code])).toEqual([['error', 'timeout']]);
    }
    expect(idle.events.map((event) => event.type)).toEqual(['info']);
    const idleMs = await within(idle.closed, IDLE_TIMEOUT_MS + 3000);
    expect(idleMs).not.toBe('timeout');
    expect(idleMs).toBeGreaterThanOrEqual(IDLE_TIMEOUT_MS - 50);
  });

  it(`takes at most ${PER_ADDRESS} connections from one address: one more is told so and closed; room again once one leaves`, async () => {
    const held = await Promise.all(Array.from({ length: PER_ADDRESS }, () => client()));
    for (const each of held) each.socket.write(encodeEvent('ping'));
    await sleep(300);
    expect(held.map((each) => each.events.map((event) => event.type))).toEqual(held.map(() => ['pong']));
    const extra = await client();
    expect(await within(extra.closed, 3000)).not.toBe('timeout');
    expect(extra.events.map((event) => [event.type, event.data.code])).toEqual([['error', 'too-many-connections']]);
    expect(logged('Wyoming connection turned away').at(-1)?.code).toBe('too-many-connections');
    held[0]?.socket.destroy();
    await held[0]?.closed;
    await sleep(100);
    const next = await client();
    next.socket.write(encodeEvent('ping'));
    await sleep(300);
    expect(next.events.map((event) => event.type)).toEqual(['pong']);
    for (const each of [...held, next]) each.socket.destroy();
  });

  it(`drops a storm of new connections from one address unread, past ${CONNECTIONS_PER_SECOND} a second`, async () => {
    // At most two seconds' worth can be taken (the storm may straddle a second); the rest are closed before a byte.
    const storm = await Promise.all(Array.from({ length: 3 * CONNECTIONS_PER_SECOND }, () => client().catch(() => undefined)));
    const opened = storm.filter((each): each is Client => each !== undefined);
    await Promise.all(opened.map((each) => within(each.closed, 3000)));
    const silent = opened.filter((each) => each.socket.destroyed && each.events.length === 0).length + (storm.length - opened.length);
    expect(silent).toBeGreaterThanOrEqual(storm.length - 2 * CONNECTIONS_PER_SECOND);
    for (const each of opened) each.socket.destroy();
    // The next second, a client is served again.
    await sleep(1100);
    const next = await client();
    next.socket.write(encodeEvent('ping'));
    await sleep(300);
    expect(next.events.map((event) => event.type)).toEqual(['pong']);
    next.socket.destroy();
  });

  it('two clients that never read hold their job slots no longer than the write timeout: an HTTP /tts still answers, and they are cut off', async () => {
    const before = logged(DISCONNECTED).length;
    const stalled = await Promise.all([client({ reads: false }), client({ reads: false })]);
    // About five minutes of speech each, three times: far more than the socket buffers hold.
    for (const each of stalled) each.socket.write(Buffer.concat([synthesize(words(4900)), synthesize(words(4900)), synthesize(words(4900))]));
    await sleep(1000);
    const response = await fetch(`${server.baseUrl}/tts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Hello there.', voice: VOICE }),
      signal: AbortSignal.timeout(20_000),
    });
    const answered = Date.now();
    expect(response.status).toBe(200);
    // A stalled write waited WRITE_TIMEOUT_MS, then its connection and its synthesis were stopped, and /tts took the slot.
    const cut = (await untilLogged(DISCONNECTED, before + 2, 30_000)).slice(before);
    expect(cut).toHaveLength(2);
    expect(answered - Math.min(...cut.map((line) => Number(line.time)))).toBeLessThan(2000);
    for (const each of stalled) expect(await cutOff(each)).toBe(true);
  }, 60_000);

  it('a flood from clients that never read (200 × 60,000 characters, 200 × 4,900, 10,000 describes) leaves /healthz answering within 100 ms p99 and memory bounded', async () => {
    const pid = server.child.pid ?? 0;
    const rssBefore = rssMb(pid);
    const latencies: number[] = [];
    let rssPeak = rssBefore;
    let flooding = true;
    const sampling = (async () => {
      while (flooding) {
        const started = performance.now();
        const health = await fetch(`${server.baseUrl}/healthz`, { signal: AbortSignal.timeout(10_000) });
        await health.arrayBuffer();
        latencies.push(performance.now() - started);
        rssPeak = Math.max(rssPeak, rssMb(pid));
        await sleep(25);
      }
    })();
    const refusedBefore = logged('Wyoming connection refused').length;
    const turnedAwayBefore = logged('Wyoming connection turned away').length;
    const cutBefore = logged(DISCONNECTED).length;
    // Each flooder connects again a moment after it is cut off, for FLOOD_MS (a storm of connections is another matter).
    const floodUntil = performance.now() + FLOOD_MS;
    const flooder = async (event: Buffer, times: number) => {
      let connections = 0;
      while (performance.now() < floodUntil) {
        const each = await client({ reads: false });
        connections += 1;
        for (let i = 0; i < times; i++) each.socket.write(event);
        // An over-long one learns of its refusal by its writes failing; the others are cut off unseen.
        await within(each.closed, WRITE_TIMEOUT_MS + 1000);
        each.socket.destroy();
        await sleep(250);
      }
      return connections;
    };
    const big = synthesize(words(60_000));
    const connections = await Promise.all([flooder(big, 200), flooder(big, 200), flooder(synthesize(words(4900)), 200), flooder(encodeEvent('describe'), 10_000)]);
    const refused = logged('Wyoming connection refused').slice(refusedBefore);
    const turnedAway = logged('Wyoming connection turned away').slice(turnedAwayBefore);
    const cut = logged(DISCONNECTED).slice(cutBefore);
    await sleep(1000);
    flooding = false;
    await sampling;
    const sorted = [...latencies].sort((a, b) => a - b);
    const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? Infinity;
    const rssAfter = rssMb(pid);
    console.log(
      `Wyoming flood: /healthz ${latencies.length} samples, p50 ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms; ` +
        `RSS ${rssBefore.toFixed(0)} MB before, ${rssPeak.toFixed(0)} MB peak, ${rssAfter.toFixed(0)} MB after; ` +
        `connections ${connections.join(', ')} (over-long, over-long, 4,900 characters, describes), ${refused.length} refused, ${turnedAway.length} turned away (over the cap), ${cut.length} cut off for not reading`,
    );
    expect(refused.length + turnedAway.length).toBeGreaterThanOrEqual(connections[0]! + connections[1]! - 2);
    expect(refused.every((line) => line.code === 'too-long')).toBe(true);
    // Over-long events came faster than the refused connections closed: the rest were turned away unread.
    expect(cut.length).toBeGreaterThanOrEqual(connections[2]! + connections[3]! - 2);
    expect(p99).toBeLessThan(100);
    expect(rssPeak - rssBefore).toBeLessThan(100);
  }, 45_000);

  it('SIGTERM ends the process within a few seconds while a client that never reads is mid-synthesis', async () => {
    const stalled = await client({ reads: false });
    stalled.socket.write(synthesize(words(4900)));
    await sleep(500);
    const started = performance.now();
    server.child.kill('SIGTERM');
    expect(await within(server.exited, 5000)).not.toBe('timeout');
    expect(performance.now() - started).toBeLessThan(5000);
    expect(await cutOff(stalled)).toBe(true);
  }, 15_000);
});
