import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { ErrorBody } from '../../src/api/errors.js';
import type { OpenAiErrorBody } from '../../src/api/openai.js';
import { rawRequest, type RawResponse } from '../helpers/raw-http.js';
import { startServer, type RunningServer } from '../helpers/server-process.js';

/** What Node and Fastify answer before any route runs, seen over a real socket to the real server process. */

const REQUEST_TIMEOUT_MS = 1500;
const HEADERS_TIMEOUT_MS = 1000;
const KEEP_ALIVE_TIMEOUT_MS = 1000;
const MAX_CONNECTIONS = 6;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HOST = 'Host: localhost\r\n';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
    MAX_CONNECTIONS_PER_ADDRESS: String(MAX_CONNECTIONS),
  });
}, 60_000);
afterAll(async () => server?.stop());

const send = (bytes: string, options?: Parameters<typeof rawRequest>[2]) => rawRequest(server.baseUrl, bytes, options);

function expectDocumented(response: RawResponse, status: number, code: string): ErrorBody {
  expect(response.status, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(response.body) as ErrorBody;
  expect(body).toMatchObject({ status: 'error', error: { code } });
  expect(body.error.message.length).toBeGreaterThan(5);
  expect(body.error.requestId).toMatch(UUID);
  expect(response.headers['x-request-id']).toBe(body.error.requestId);
  return body;
}

function expectOpenAi(response: RawResponse, status: number, code: string): void {
  expect(response.status, response.body).toBe(status);
  const body = JSON.parse(response.body) as OpenAiErrorBody;
  expect(body.error).toMatchObject({ code, type: 'invalid_request_error', param: null });
  expect(response.headers['x-request-id']).toMatch(UUID);
}

describe('errors raised before routing', () => {
  it.each(['/files/audio/%c0%ae', '/%zz', '/tts%'])('a malformed URL (%s) → 400 BAD_REQUEST in the documented body', async (url) => {
    expectDocumented(await send(`GET ${url} HTTP/1.1\r\n${HOST}\r\n`), 400, 'BAD_REQUEST');
  });

  it('a malformed URL under /v1 → OpenAI’s body', async () => {
    expectOpenAi(await send(`POST /v1/audio/speech%c0 HTTP/1.1\r\n${HOST}Content-Length: 0\r\n\r\n`), 400, 'bad_request');
  });

  it.each([
    ['a bad Content-Length', `POST /tts HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nContent-Length: 12abc\r\n\r\n{}`],
    ['Content-Length with Transfer-Encoding', `POST /tts HTTP/1.1\r\n${HOST}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}`],
    ['a control character in a header', `GET /voices HTTP/1.1\r\n${HOST}X-Note: a\u0001b\r\n\r\n`],
    ['a request line that is not HTTP', `GET /voices HTTX/1.1\r\n${HOST}\r\n`],
  ])('%s → 400 BAD_REQUEST in the documented body, connection closed', async (_name, bytes) => {
    const response = await send(bytes);
    expectDocumented(response, 400, 'BAD_REQUEST');
    expect(response.headers.connection).toBe('close');
    expect(response.closed).toBe(true);
  });

  it('an unparsable request under /v1 → OpenAI’s body', async () => {
    const response = await send(`POST /v1/audio/speech HTTP/1.1\r\n${HOST}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}`);
    expectOpenAi(response, 400, 'bad_request');
    expect(response.closed).toBe(true);
  });

  it('headers too large → 431 HEADERS_TOO_LARGE', async () => {
    const response = await send(`GET /voices HTTP/1.1\r\n${HOST}X-Padding: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectDocumented(response, 431, 'HEADERS_TOO_LARGE');
    expect(response.closed).toBe(true);
  });

  it('an HTTP/1.1 request without Host → 400 BAD_REQUEST', async () => {
    const body = expectDocumented(await send('GET /voices HTTP/1.1\r\n\r\n'), 400, 'BAD_REQUEST');
    expect(body.error.message).toMatch(/Host/);
  });

  it('an expectation other than 100-continue → 417 EXPECTATION_FAILED', async () => {
    const response = await send(`POST /tts HTTP/1.1\r\n${HOST}Expect: sandwiches\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`);
    expectDocumented(response, 417, 'EXPECTATION_FAILED');
  });
});

describe('slow clients', () => {
  it('a body trickling in is answered 408 REQUEST_TIMEOUT within REQUEST_TIMEOUT_MS', async () => {
    const response = await send(`POST /tts HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n`, {
      trickle: { text: ' '.repeat(1000), everyMs: 300 },
    });
    expectDocumented(response, 408, 'REQUEST_TIMEOUT');
    expect(response.closed).toBe(true);
    expect(response.elapsedMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
    expect(response.elapsedMs).toBeLessThan(REQUEST_TIMEOUT_MS + 1000);
  });

  it('headers trickling in are answered 408 within HEADERS_TIMEOUT_MS', async () => {
    const response = await send('GET /voices HTTP/1.1\r\n', { trickle: { text: `X-Slow: ${'a'.repeat(1000)}`, everyMs: 100 } });
    expectDocumented(response, 408, 'REQUEST_TIMEOUT');
    expect(response.elapsedMs).toBeLessThan(HEADERS_TIMEOUT_MS + 1000);
  });

  it('an idle keep-alive connection is closed after KEEP_ALIVE_TIMEOUT_MS', async () => {
    const started = Date.now();
    const response = await send(`GET /healthz HTTP/1.1\r\n${HOST}\r\n`, { lingerMs: 5000 });
    expect(response.status).toBe(200);
    expect(response.headers['keep-alive']).toBe(`timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`);
    expect(response.closed).toBe(true);
    expect(Date.now() - started).toBeLessThan(KEEP_ALIVE_TIMEOUT_MS + 3000);
  });

  it('an answer given before the body arrived closes the connection instead of waiting for the body', async () => {
    const response = await send(`POST /tts HTTP/1.1\r\n${HOST}Content-Type: text/plain\r\nContent-Length: 1000\r\n\r\nHel`);
    expectDocumented(response, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(response.headers.connection).toBe('close');
    expect(response.closed).toBe(true);
  });
});

describe('connections per address', () => {
  const connect = () =>
    new Promise<net.Socket>((resolve, reject) => {
      const { port, hostname } = new URL(server.baseUrl);
      const socket = net.connect(Number(port), hostname, () => resolve(socket));
      socket.once('error', reject);
    });

  it('refuses a connection beyond MAX_CONNECTIONS_PER_ADDRESS with 429 RATE_LIMITED, and takes new ones once they close', async () => {
    const held = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, connect));
    try {
      const refused = await send(`GET /healthz HTTP/1.1\r\n${HOST}\r\n`);
      expectDocumented(refused, 429, 'RATE_LIMITED');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.closed).toBe(true);
    } finally {
      held.forEach((socket) => socket.destroy());
    }
    await expect.poll(async () => (await send(`GET /healthz HTTP/1.1\r\n${HOST}\r\n`)).status, { timeout: 3000 }).toBe(200);
  });
});

describe('a request arriving while the server closes', () => {
  let closing: RunningServer | undefined;
  afterAll(async () => closing?.stop());

  it('gets 503 SHUTTING_DOWN in the documented body, not Fastify’s own', async () => {
    closing = await startServer();
    const running = closing;
    const refusesConnections = () =>
      new Promise<boolean>((resolve) => {
        const { port, hostname } = new URL(running.baseUrl);
        const socket = net.connect(Number(port), hostname);
        socket.once('connect', () => resolve(socket.destroy() && false));
        socket.once('error', () => resolve(true));
      });
    let closed!: () => void;
    const whenClosed = new Promise<void>((resolve) => (closed = resolve));
    // The request's headers are held back until the server has stopped listening: a connection in use stays open.
    const answer = rawRequest(running.baseUrl, `GET /voices HTTP/1.1\r\n${HOST}`, { rest: { text: '\r\n', when: whenClosed }, timeoutMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    running.child.kill('SIGTERM');
    await expect.poll(refusesConnections, { timeout: 5000 }).toBe(true);
    closed();
    const response = await answer;
    expectDocumented(response, 503, 'SHUTTING_DOWN');
    expect(response.headers.connection).toBe('close');
    expect(await running.exited).toEqual({ code: 0, signal: null });
  }, 30_000);
});

describe('connection limits in the configuration', () => {
  it('default to 30 s for a request, 10 s for its headers, 5 s of keep-alive, no cap per address', () => {
    expect(loadConfig({}).connections).toEqual({ requestTimeoutMs: 30_000, headersTimeoutMs: 10_000, keepAliveTimeoutMs: 5_000, maxPerAddress: 0 });
  });

  it('keep the headers timeout within the request timeout', () => {
    expect(loadConfig({ REQUEST_TIMEOUT_MS: '4000' }).connections.headersTimeoutMs).toBe(4000);
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: '4000', HEADERS_TIMEOUT_MS: '5000' })).toThrow(ConfigError);
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: '4000', HEADERS_TIMEOUT_MS: '5000' })).toThrow(/\bHEADERS_TIMEOUT_MS=/);
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: '0' })).toThrow(/\bREQUEST_TIMEOUT_MS=/);
  });
});
