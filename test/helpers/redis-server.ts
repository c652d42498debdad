import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';

export interface RunningRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Stops the server's process where it stands (SIGSTOP): connections stay open and nothing answers, as in a stall. */
  pause(): void;
  /** Lets a paused server go on (SIGCONT). */
  resume(): void;
}

/** A free TCP port on loopback, as the kernel hands one out. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** Starts Debian's redis-server on a free loopback port, in memory only, and waits until it answers. */
export async function startRedis(): Promise<RunningRedis> {
  const port = await freePort();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'voxreel-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve();
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${String(code)}:\n${output}`)));
    child.once('error', reject);
    setTimeout(() => reject(new Error(`redis-server did not start in 10 s:\n${output}`)), 10_000).unref();
  });
  const exited = once(child, 'exit');
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A redis-server for the tests of this file, started before them and stopped after. */
export function useRedis(): { readonly url: string } {
  let redis: RunningRedis | undefined;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());
  return {
    get url() {
      if (!redis) throw new Error('redis-server is not started yet (use it inside a test)');
      return redis.url;
    },
  };
}
