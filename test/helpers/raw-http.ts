import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from connecting to the whole answer, or to giving up. */
  elapsedMs: number;
  /** Whether the server closed the connection (after its answer, or without one). */
  closed: boolean;
}

export interface RawOptions {
  /** Sent after the first bytes, one character at a time, this many milliseconds apart, until the server answers. */
  trickle?: { text: string; everyMs: number };
  /** Give up after this long without a whole answer (status 0). */
  timeoutMs?: number;
  /** After the answer, how long to wait for the server to close the connection (500 ms). */
  lingerMs?: number;
  /** Sent once `when` settles: the end of a request held back on purpose. */
  rest?: { text: string; when: Promise<unknown> };
}

/**
 * Sends raw bytes to a server over a fresh socket and parses the first answer: what a misbehaving or slow client
 * sees, which `inject` cannot show (Node's parser and timeouts are not in its path).
 */
export function rawRequest(baseUrl: string, bytes: string, options: RawOptions = {}): Promise<RawResponse> {
  const { port, hostname } = new URL(baseUrl);
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(Number(port), hostname);
    let received = Buffer.alloc(0);
    let answer: Omit<RawResponse, 'elapsedMs' | 'closed'> | undefined;
    let answeredAt = 0;
    const timers: NodeJS.Timeout[] = [];
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      timers.forEach(clearTimeout);
      socket.destroy();
      const elapsedMs = (answer ? answeredAt : Date.now()) - started;
      resolve({ ...(answer ?? { status: 0, headers: {}, body: received.toString('latin1') }), elapsedMs, closed });
    };
    socket.on('data', (chunk: Buffer) => {
      if (answer) return;
      received = Buffer.concat([received, chunk]);
      answer = parseResponse(received);
      if (!answer) return;
      answeredAt = Date.now();
      // Keep the socket a while, so `closed` tells whether the server ends it.
      timers.push(setTimeout(() => finish(false), options.lingerMs ?? 500));
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => undefined);
    socket.write(bytes);
    const { trickle } = options;
    if (trickle) {
      let sent = 0;
      const tick = setInterval(() => {
        if (answer || socket.destroyed || sent >= trickle.text.length) clearInterval(tick);
        else socket.write(trickle.text.charAt(sent++));
      }, trickle.everyMs);
      timers.push(tick);
    }
    void options.rest?.when.finally(() => socket.destroyed || socket.write(options.rest?.text ?? ''));
    timers.push(setTimeout(() => finish(false), options.timeoutMs ?? 10_000));
  });
}

function parseResponse(data: Buffer): Omit<RawResponse, 'elapsedMs' | 'closed'> | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
    }),
  );
  const body = data.subarray(end + 4);
  if (body.length < Number(headers['content-length'] ?? 0)) return undefined;
  return { status: Number(statusLine.split(' ')[1]), headers, body: body.toString('utf8') };
}
