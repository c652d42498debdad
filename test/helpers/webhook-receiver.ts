import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll } from 'vitest';

export interface Delivery {
  headers: IncomingMessage['headers'];
  body: string;
}

export interface WebhookReceiver {
  /** Every POST received so far, in order. */
  readonly received: Delivery[];
  /** Where to send them (a loopback address: the app needs WEBHOOK_ALLOW_PRIVATE). */
  readonly url: string;
  /** Resolves once `count` deliveries have arrived, or after about 5 s with what there is. */
  waitFor(count: number): Promise<Delivery[]>;
}

/** A real HTTP server on loopback that records webhook deliveries and answers 204, for the tests of this file. */
export function useWebhookReceiver(): WebhookReceiver {
  const received: Delivery[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      response.writeHead(204).end();
    });
  });
  let url = '';
  beforeAll(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    received,
    get url() {
      return url;
    },
    // Up to 30 s: on a machine busy with other work a worker's webhook has arrived after more than 5 s (CI, under load).
    waitFor: async (count) => {
      for (let waited = 0; received.length < count && waited < 600; waited++) await new Promise((resolve) => setTimeout(resolve, 50));
      return received;
    },
  };
}
