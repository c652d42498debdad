import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError, cancelReason } from '../../src/errors.js';
import { checkWebhookUrl, deliverWebhook, signWebhook, verifyWebhookSignature, type DeliveryOptions } from '../../src/jobs/webhooks/delivery.js';
import { version } from '../../src/version.js';

const SECRET = 'whsec_test_secret';
const PAYLOAD = { id: 'job-1', status: 'succeeded', url: 'https://cdn.example/audio/a.mp3' };

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** Answers a request (the how-manyth it is, from 0); answering nothing leaves the request hanging. */
type Respond = (response: ServerResponse, index: number) => void;

interface Receiver {
  url(path?: string): URL;
  received: Received[];
}

const openServers: Array<ReturnType<typeof createServer>> = [];

afterEach(async () => {
  await Promise.all(
    openServers.splice(0).map((server) => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    }),
  );
});

/** A real HTTP server on 127.0.0.1 that records every request it gets. */
async function startReceiver(respond: Respond): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      respond(response, received.length - 1);
    });
  });
  openServers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: (path = '/hook') => new URL(`http://127.0.0.1:${port}${path}`), received };
}

function answer(status: number, headers: Record<string, string> = {}): Respond {
  return (response) => response.writeHead(status, headers).end();
}

function options(overrides: Partial<DeliveryOptions> = {}): DeliveryOptions {
  return { secret: SECRET, allowPrivate: true, event: 'job.succeeded', baseDelayMs: 1, timeoutMs: 2000, ...overrides };
}

function header(request: Received | undefined, name: string): string {
  const value = request?.headers[name.toLowerCase()];
  if (typeof value !== 'string') throw new Error(`no ${name} header`);
  return value;
}

describe('signatures', () => {
  const body = JSON.stringify(PAYLOAD);
  const t = 1_700_000_000;

  it('accepts its own signature and rejects another body, secret or malformed header', () => {
    const signature = signWebhook(SECRET, t, body);
    expect(signature).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(SECRET, signature, body, { now: t })).toBe(true);
    expect(verifyWebhookSignature(SECRET, signature, body.replace('succeeded', 'failed'), { now: t })).toBe(false);
    expect(verifyWebhookSignature('another secret', signature, body, { now: t })).toBe(false);
    for (const malformed of ['', 't=1700000000', signature.replace(/^t=\d+,/, ''), signature.replace('t=1700000000', 't=soon')]) {
      expect(verifyWebhookSignature(SECRET, malformed, body, { now: t })).toBe(false);
    }
  });

  it('rejects a timestamp outside the tolerance, past or future', () => {
    const signature = signWebhook(SECRET, t, body);
    expect(verifyWebhookSignature(SECRET, signature, body, { now: t + 300 })).toBe(true);
    expect(verifyWebhookSignature(SECRET, signature, body, { now: t + 301 })).toBe(false);
    expect(verifyWebhookSignature(SECRET, signature, body, { now: t - 301 })).toBe(false);
    expect(verifyWebhookSignature(SECRET, signature, body, { now: t + 3600, toleranceSeconds: 3600 })).toBe(true);
    expect(verifyWebhookSignature(SECRET, signWebhook(SECRET, Math.floor(Date.now() / 1000) - 600, body), body)).toBe(false);
  });

  it('accepts any one of several v1 signatures, as when a secret is rotated', () => {
    const [, oldSignature] = signWebhook('old secret', t, body).split(',');
    expect(verifyWebhookSignature(SECRET, `${signWebhook(SECRET, t, body)},${oldSignature}`, body, { now: t })).toBe(true);
  });
});

describe('deliverWebhook', () => {
  it('POSTs the payload as signed JSON with its event, delivery id and user agent', async () => {
    const receiver = await startReceiver(answer(204));
    const result = await deliverWebhook(receiver.url(), PAYLOAD, options());
    expect(result).toMatchObject({ delivered: true, attempts: 1, status: 204 });
    const [request] = receiver.received;
    expect(request?.path).toBe('/hook');
    expect(JSON.parse(request?.body ?? '')).toEqual(PAYLOAD);
    expect(header(request, 'Content-Type')).toBe('application/json');
    expect(header(request, 'User-Agent')).toBe(`voxreel-webhook/${version}`);
    expect(header(request, 'Voxreel-Event')).toBe('job.succeeded');
    expect(header(request, 'Voxreel-Delivery')).toBe(result.deliveryId);
    const signature = header(request, 'Voxreel-Signature');
    expect(verifyWebhookSignature(SECRET, signature, request?.body ?? '')).toBe(true);
    expect(verifyWebhookSignature(SECRET, signature, `${request?.body} `)).toBe(false);
  });

  it('retries a 500 with the same delivery id and a fresh valid signature each time', async () => {
    const receiver = await startReceiver((response, index) => response.writeHead(index < 2 ? 500 : 200).end('ok'));
    const warnings: object[] = [];
    const result = await deliverWebhook(receiver.url(), PAYLOAD, options({ logger: { warn: (obj) => warnings.push(obj) } }));
    expect(result).toMatchObject({ delivered: true, attempts: 3, status: 200 });
    expect(new Set(receiver.received.map((request) => header(request, 'Voxreel-Delivery')))).toEqual(new Set([result.deliveryId]));
    for (const request of receiver.received) {
      expect(verifyWebhookSignature(SECRET, header(request, 'Voxreel-Signature'), request.body)).toBe(true);
    }
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatchObject({ attempt: 1, status: 500, retrying: true });
  });

  it('gives up at once on a 404', async () => {
    const receiver = await startReceiver(answer(404));
    const result = await deliverWebhook(receiver.url(), PAYLOAD, options());
    expect(result).toMatchObject({ delivered: false, attempts: 1, status: 404 });
    expect(receiver.received).toHaveLength(1);
  });

  it('stops after the last attempt when every answer is a 5xx', async () => {
    const receiver = await startReceiver(answer(503));
    const result = await deliverWebhook(receiver.url(), PAYLOAD, options({ attempts: 3 }));
    expect(result).toMatchObject({ delivered: false, attempts: 3, status: 503 });
    expect(receiver.received).toHaveLength(3);
  });

  it('waits as long as Retry-After says on a 429', async () => {
    const receiver = await startReceiver((response, index) => (index === 0 ? answer(429, { 'Retry-After': '1' }) : answer(204))(response, index));
    const result = await deliverWebhook(receiver.url(), PAYLOAD, options());
    expect(result).toMatchObject({ delivered: true, attempts: 2 });
    const [first, second] = receiver.received;
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it('retries a receiver that never answers, then gives up', async () => {
    const receiver = await startReceiver(() => undefined);
    const result = await deliverWebhook(receiver.url(), PAYLOAD, options({ attempts: 2, timeoutMs: 200 }));
    expect(result).toMatchObject({ delivered: false, attempts: 2, error: 'no answer within 200 ms' });
    expect(result.status).toBeUndefined();
    expect(receiver.received).toHaveLength(2);
  });

  it('counts a 2xx as delivered even when its body never ends', async () => {
    const receiver = await startReceiver((response) => response.writeHead(200).write('partial'));
    const result = await deliverWebhook(receiver.url(), PAYLOAD, options({ timeoutMs: 500 }));
    expect(result).toMatchObject({ delivered: true, attempts: 1, status: 200 });
  });

  it('retries a refused connection', async () => {
    const receiver = await startReceiver(answer(204));
    const url = receiver.url();
    const server = openServers.pop();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    const result = await deliverWebhook(url, PAYLOAD, options({ attempts: 2 }));
    expect(result).toMatchObject({ delivered: false, attempts: 2 });
    expect(result.error).toMatch(/ECONNREFUSED/);
  });

  it('does not follow a redirect', async () => {
    const receiver = await startReceiver((response) => response.writeHead(302, { Location: receiver.url('/elsewhere').href }).end());
    const result = await deliverWebhook(receiver.url(), PAYLOAD, options());
    expect(result).toMatchObject({ delivered: false, attempts: 1, status: 302 });
    expect(receiver.received.map((request) => request.path)).toEqual(['/hook']);
  });

  it('refuses a name that resolves to loopback before sending anything, unless private addresses are allowed', async () => {
    const receiver = await startReceiver(answer(204));
    const url = new URL(receiver.url().href.replace('127.0.0.1', 'localhost'));
    const refused = await deliverWebhook(url, PAYLOAD, options({ allowPrivate: false }));
    expect(refused).toMatchObject({ delivered: false, attempts: 1 });
    expect(refused.error).toMatch(/localhost resolves to a loopback, private/);
    expect(receiver.received).toHaveLength(0);
    // The same URL reaches the server when allowed: the refusal above was the check, not a failed connection.
    expect(await deliverWebhook(url, PAYLOAD, options())).toMatchObject({ delivered: true });
  });

  it('stops retrying when its signal aborts, rejecting with the reason', async () => {
    const controller = new AbortController();
    const receiver = await startReceiver((response) => {
      response.writeHead(500).end();
      setTimeout(() => controller.abort(cancelReason('SHUTTING_DOWN')), 50);
    });
    const started = Date.now();
    const delivery = deliverWebhook(receiver.url(), PAYLOAD, options({ baseDelayMs: 60_000, signal: controller.signal }));
    await expect(delivery).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(receiver.received).toHaveLength(1);
  });

  it('abandons an attempt in flight when its signal aborts', async () => {
    const controller = new AbortController();
    const receiver = await startReceiver(() => setTimeout(() => controller.abort(), 50));
    const delivery = deliverWebhook(receiver.url(), PAYLOAD, options({ timeoutMs: 30_000, signal: controller.signal }));
    await expect(delivery).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
    expect(receiver.received).toHaveLength(1);
  });
});

describe('checkWebhookUrl', () => {
  const allowed = { allowPrivate: false, secret: SECRET };

  function refusal(raw: string, checkOptions: { allowPrivate: boolean; secret?: string } = allowed): AppError {
    try {
      checkWebhookUrl(raw, checkOptions);
    } catch (error) {
      if (error instanceof AppError) return error;
      throw error;
    }
    throw new Error(`${raw} was accepted`);
  }

  it.each([
    'http://127.0.0.1/hook',
    'http://127.8.9.10/hook',
    'http://2130706433/hook', // 127.0.0.1 as one number
    'http://0x7f.1/hook',
    'http://10.0.0.1/hook',
    'http://172.16.5.4/hook',
    'http://192.168.1.1/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://100.64.0.1/hook',
    'http://0.0.0.0/hook',
    'http://224.0.0.1/hook',
    'http://255.255.255.255/hook',
    'http://[::1]/hook',
    'http://[::]/hook',
    'http://[fc00::1]/hook',
    'http://[fd12:3456::1]/hook',
    'http://[fe80::1]/hook',
    'http://[ff02::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://[::ffff:7f00:1]/hook',
    'http://[::ffff:10.0.0.1]/hook',
    'http://[0:0:0:0:0:ffff:a9fe:a9fe]/hook', // 169.254.169.254
    'http://[64:ff9b::192.168.0.1]/hook', // NAT64
    'http://[::127.0.0.1]/hook', // IPv4-compatible
    'http://[::ffff:0:127.0.0.1]/hook', // IPv4-translated
    'http://[64:ff9b:1::7f00:1]/hook', // local-use NAT64
    'http://[2002:7f00:1::]/hook', // 6to4
    'http://[2002:a9fe:a9fe::1]/hook', // 6to4 to the metadata service
    'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook', // Teredo to 127.0.0.1
    'http://localhost/hook',
    'http://LOCALHOST./hook',
    'https://api.localhost:8443/hook',
  ])('refuses the private host of %s', (raw) => {
    const error = refusal(raw);
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', field: 'webhook_url', statusCode: 400 });
    expect(error.message).toMatch(/WEBHOOK_ALLOW_PRIVATE/);
    expect(checkWebhookUrl(raw, { allowPrivate: true, secret: SECRET })).toBeInstanceOf(URL);
  });

  it.each([
    ['ftp://example.com/hook', /http or https/],
    ['file:///etc/passwd', /http or https/],
    ['javascript:alert(1)', /http or https/],
    ['https://user:pass@example.com/hook', /user name or password/],
    ['https://token@example.com/hook', /user name or password/],
    [`https://example.com/${'a'.repeat(2048)}`, /longer than 2048/],
    ['/relative/hook', /not a valid absolute URL/],
  ])('refuses %s whatever its host', (raw, message) => {
    const error = refusal(raw, { allowPrivate: true, secret: SECRET });
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', field: 'webhook_url' });
    expect(error.message).toMatch(message);
  });

  it('refuses every webhook when the server has no WEBHOOK_SECRET', () => {
    const error = refusal('https://example.com/hook', { allowPrivate: false });
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', field: 'webhook_url' });
    expect(error.message).toMatch(/WEBHOOK_SECRET/);
  });

  it.each(['https://93.184.216.34/hook', 'https://example.com/hooks/voxreel?token=abc', 'http://[2606:4700:4700::1111]:8080/hook', 'https://[::ffff:93.184.216.34]/hook', 'http://[2002:5db8:d822::1]/hook', 'http://[64:ff9b::93.184.216.34]/hook'])(
    'accepts the public host of %s',
    (raw) => {
      expect(checkWebhookUrl(raw, allowed).href).toBe(new URL(raw).href);
    },
  );
});
