/**
 * The Docker image as an operator runs it: built from this checkout's Dockerfile, its size, and the time from
 * `docker run` to listening and to /readyz 200 (the start-up voice warm) on loopback. Measured where a Docker
 * daemon answers (here: ../shared/tools/docker-local.sh), said so where none does.
 */
import { execFile } from 'node:child_process';
import { get } from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { round, timings, type Timings } from './stats.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');
const TAG = 'voxreel:bench';
/** Loopback ports for the container's 3000, one per run (Docker frees a port a while after its container goes). */
const FIRST_PORT = 38_731;
const READY_DEADLINE_MS = 120_000;

export type DockerImageResult =
  | { measured: true; sizeMb: number; buildSeconds: number; listeningMs: Timings; readyMs: Timings; warmVoice: string | null }
  | { measured: false; reason: string };

async function docker(args: string[], timeout = 60_000): Promise<string> {
  const { stdout } = await run('docker', args, { timeout, maxBuffer: 64 * 1024 * 1024 });
  return stdout.trim();
}

/**
 * GET /readyz: its status and body, or undefined when nothing answers within a second. Docker's proxy takes the
 * connection before the service listens and holds it (fetch then waits on it without keeping Node alive).
 */
function readyz(port: number): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const request = get({ host: '127.0.0.1', port, path: '/readyz', timeout: 1000 }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', () => resolve(undefined));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(undefined));
  });
}

/** Polls the container until /readyz answers 200: the ms to its first answer of any kind and to the 200. */
async function startOnce(port: number): Promise<{ listening: number; ready: number; warmVoice: string | null }> {
  const started = performance.now();
  const id = await docker(['run', '-d', '--rm', '-p', `127.0.0.1:${port}:3000`, TAG]);
  try {
    let listening: number | undefined;
    while (performance.now() - started < READY_DEADLINE_MS) {
      const response = await readyz(port);
      if (response) listening ??= performance.now() - started;
      if (response?.status === 200) {
        const body = JSON.parse(response.body) as { warmVoice?: string };
        return { listening: listening ?? Number.NaN, ready: performance.now() - started, warmVoice: body.warmVoice ?? null };
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`the container was not ready within ${READY_DEADLINE_MS / 1000} s`);
  } finally {
    await docker(['rm', '-f', id]).catch(() => undefined);
  }
}

export async function measureDockerImage(runs: number): Promise<DockerImageResult> {
  const reachable = await docker(['version', '--format', '{{.Server.Version}}']).catch((error: unknown) => error);
  if (typeof reachable !== 'string') return { measured: false, reason: 'no Docker daemon answers here (start one with ../shared/tools/docker-local.sh)' };
  const built = performance.now();
  await docker(['build', '-q', '-t', TAG, ROOT], 1_800_000);
  const buildSeconds = round((performance.now() - built) / 1000, 1);
  const sizeMb = Math.round(Number(await docker(['image', 'inspect', '-f', '{{.Size}}', TAG])) / 1e6);
  const listening: number[] = [];
  const ready: number[] = [];
  let warmVoice: string | null = null;
  for (let index = 0; index < runs; index += 1) {
    const once = await startOnce(FIRST_PORT + index);
    listening.push(once.listening);
    ready.push(once.ready);
    warmVoice = once.warmVoice;
  }
  console.log(`  Docker image ${sizeMb} MB (built in ${buildSeconds} s): ready in ${timings(ready).p50} ms from \`docker run\``);
  return { measured: true, sizeMb, buildSeconds, listeningMs: timings(listening), readyMs: timings(ready), warmVoice };
}
