// Issue 22: what a process promised survives it. A webhook whose receiver is down when the job finishes is kept
// (on disk without Redis, in Redis with it) and delivered by the next process once the receiver is back.
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openWorker, type RunningWorker } from '../../src/app/open-worker.js';
import { verifyWebhookSignature } from '../../src/jobs/webhooks/delivery.js';
import { buildTestApp, type TestApp } from '../helpers/helpers.js';
import { freePort, startRedis, type RunningRedis } from '../helpers/redis-server.js';
import { startWorker } from '../helpers/server-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const SECRET = 'a-webhook-secret-for-tests';
const VOICE = 'espeak-ng:en-us';
const ENV = { WEBHOOK_SECRET: SECRET, WEBHOOK_ALLOW_PRIVATE: 'true', CACHE_MAX_ENTRIES: '0' };
const LOG = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A receiver started late on a port chosen early: until then, deliveries to it are refused. */
class LateReceiver {
  readonly received: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
  private server: Server | undefined;
  constructor(readonly port: number) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        this.received.push({ headers: request.headers, body });
        response.writeHead(204).end();
      });
    });
    this.server.listen(this.port, '127.0.0.1');
    await once(this.server, 'listening');
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

async function waitFor<T>(read: () => Promise<T> | T, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; ; ) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe('without Redis: the outbox on disk', () => {
  const output = useTempDir('voxreel-outbox-');

  it('keeps a delivery whose receiver is down across a restart, and the next process delivers it, signed, with the same delivery id', async () => {
    const receiver = new LateReceiver(await freePort());
    cleanups.push(() => receiver.stop());
    const first: TestApp = await buildTestApp({ ...ENV, OUTPUT_DIR: output });
    let closedFirst = false;
    cleanups.push(() => (closedFirst ? Promise.resolve() : first.app.close()));
    const accepted = await first.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Tell me later.', voice: VOICE, webhook_url: receiver.url } });
    expect(accepted.statusCode, accepted.body).toBe(202);
    const id = accepted.json<{ id: string }>().id;

    // The first attempt was refused: the delivery waits in its file, with its next time.
    const outbox = path.join(output, '.webhooks');
    const stored = await waitFor(
      async () => JSON.parse(await readFile(path.join(outbox, `${id}.succeeded.json`), 'utf8').catch(() => '{}')) as { attempts?: number },
      (value) => (value.attempts ?? 0) >= 1,
    );
    expect(stored).toMatchObject({ deliveryId: `${id}.succeeded`, event: 'job.succeeded' });
    await first.app.close();
    closedFirst = true;

    await receiver.start();
    const second = await buildTestApp({ ...ENV, OUTPUT_DIR: output });
    cleanups.push(() => second.app.close());
    const [delivery] = await waitFor(
      () => receiver.received,
      (received) => received.length > 0,
    );
    expect(delivery?.headers['voxreel-delivery']).toBe(`${id}.succeeded`);
    expect(verifyWebhookSignature(SECRET, String(delivery?.headers['voxreel-signature']), delivery?.body ?? '')).toBe(true);
    expect(JSON.parse(delivery?.body ?? '{}')).toMatchObject({ event: 'job.succeeded', job: { id, state: 'succeeded' } });
    await waitFor(
      () => readdir(outbox),
      (files) => files.length === 0,
    );
    expect(receiver.received).toHaveLength(1);
  }, 60_000);
});

/** The one delivery `receiver` gets for job `id`: its id, its signature; and no second one a second later. */
async function expectDeliveredOnce(receiver: LateReceiver, id: string): Promise<void> {
  const [delivery] = await waitFor(
    () => receiver.received,
    (received) => received.length > 0,
  );
  expect(delivery?.headers['voxreel-delivery']).toBe(`${id}.succeeded`);
  expect(verifyWebhookSignature(SECRET, String(delivery?.headers['voxreel-signature']), delivery?.body ?? '')).toBe(true);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  expect(receiver.received).toHaveLength(1);
}

describe('with Redis: deliveries are jobs of their own', () => {
  /** A Redis, a receiver not yet listening, and an API on the queue `queueName`; all stopped after the test. */
  async function setUp(queueName: string) {
    const redis: RunningRedis = await startRedis();
    cleanups.push(() => redis.stop());
    const receiver = new LateReceiver(await freePort());
    cleanups.push(() => receiver.stop());
    const env = { ...ENV, REDIS_URL: redis.url, CDN_URL: 'http://files.example/files', QUEUE_NAME: queueName };
    const api = await buildTestApp(env);
    cleanups.push(() => api.close());
    const workerEnv = { ...env, OUTPUT_DIR: api.outputDir, CONCURRENCY: '1' };
    const worker = async () => {
      const opened = await openWorker({ ...loadConfig({ ...workerEnv, LOG_LEVEL: 'silent', WARM_VOICE: 'none' }), redisUrl: redis.url }, LOG);
      cleanups.push(() => opened.close(1000));
      return opened;
    };
    /** Queues a job with the receiver as its webhook and waits until its delivery's first attempt was refused. */
    const refusedOnce = async (timeoutMs?: number) => {
      const accepted = await api.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Tell me later.', voice: VOICE, webhook_url: receiver.url } });
      expect(accepted.statusCode, accepted.body).toBe(202);
      const id = accepted.json<{ id: string }>().id;
      const { Queue } = await import('bullmq');
      const deliveries = new Queue(`${queueName}-webhooks`, { connection: { host: '127.0.0.1', port: redis.port } });
      cleanups.push(() => deliveries.close());
      await waitFor(
        async () => (await deliveries.getJob(`${id}.succeeded`))?.attemptsMade ?? 0,
        (attempts) => attempts >= 1,
        timeoutMs,
      );
      return id;
    };
    return { receiver, workerEnv, worker, refusedOnce };
  }

  it('a worker that stops with a delivery pending leaves it in Redis; another worker delivers it once the receiver is back', async () => {
    const { receiver, worker, refusedOnce } = await setUp('outbox');
    const first: RunningWorker = await worker();
    const id = await refusedOnce();
    await first.close(1000);
    await receiver.start();
    await worker();
    await expectDeliveredOnce(receiver, id);
  }, 90_000);

  it('a worker killed (SIGKILL) with a delivery pending leaves it in Redis; another worker delivers it', async () => {
    const { receiver, workerEnv, worker, refusedOnce } = await setUp('outbox-kill');
    const doomed = await startWorker(workerEnv);
    cleanups.push(() => doomed.stop());
    const id = await refusedOnce(60_000);
    await doomed.stop(); // SIGKILL: no close, no goodbye
    await receiver.start();
    await worker();
    await expectDeliveredOnce(receiver, id);
  }, 120_000);
});
