import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { textOf } from './texts.js';
import { startServer, startWorker, type RunningServer, type StartOptions } from '../test/helpers/server-process.js';

/** Longest any single request may take before the benchmark gives up on it. */
const REQUEST_TIMEOUT_MS = 180_000;

export interface Service {
  /** Empty for a worker: it listens on nothing. */
  baseUrl: string;
  pid: number;
  /** Its JSON log lines so far. */
  logs: ReadonlyArray<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** The request cache and the sentence cache off: every request does its work, as the raw pipelines it is compared with do. */
export const CACHES_OFF = { CACHE_MAX_ENTRIES: '0', SENTENCE_CACHE_MB: '0' };

/**
 * `npm start`'s command (the compiled build) as a real process on a free loopback port (test/helpers/server-process.ts), configured as shipped
 * (LOG_LEVEL info, CONCURRENCY = cores) except: its own temporary OUTPUT_DIR, no rate limit and no per-client caps
 * (the benchmark is one client standing in for many), and CACHES_OFF (the sections repeat identical requests).
 */
export async function startService(env: Record<string, string> = {}, options: StartOptions = {}): Promise<Service> {
  return managed(await startServer({ RATE_LIMIT_MAX: '0', CLIENT_MAX_JOBS: '0', CLIENT_CHARACTERS_PER_WINDOW: '0', ...CACHES_OFF, ...env }, { build: 'compiled', ...options }));
}

/** `voxreel worker` as a real process (test/helpers/server-process.ts), stopped as the server is. */
export async function startWorkerService(env: Record<string, string>): Promise<Service> {
  return managed(await startWorker(env, { build: 'compiled' }));
}

function managed(server: RunningServer): Service {
  const pid = server.child.pid;
  if (pid === undefined) throw new Error('the process has no pid');
  const kill = () => server.child.kill('SIGKILL');
  process.once('exit', kill);
  let stopped: Promise<void> | undefined;
  // SIGTERM first, so the process stops its engine hosts itself; the helper's SIGKILL is the fallback.
  const stop = () =>
    (stopped ??= (async () => {
      server.child.kill('SIGTERM');
      await Promise.race([server.exited, new Promise((resolve) => setTimeout(resolve, 20_000).unref())]);
      await server.stop();
      process.off('exit', kill);
    })());
  return { baseUrl: server.baseUrl, pid, logs: server.logs, stop };
}

export interface Answer<T> {
  status: number;
  /** From just before the request to the last byte of the answer. */
  ms: number;
  body: T;
}

/** One JSON POST over loopback (undici's keep-alive pool), timed end to end. */
export async function postJson<T>(url: string, body: unknown): Promise<Answer<T>> {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  return { status: response.status, ms, body: JSON.parse(text) as T };
}

/** postJson that insists on 200. */
export async function postOk<T>(url: string, body: unknown): Promise<Answer<T>> {
  const answer = await postJson<T>(url, body);
  if (answer.status !== 200) throw new Error(`POST ${url}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 500)}`);
  return answer;
}

/** GET /voices: the voices this server offers, with their engines. */
export async function listVoices(baseUrl: string): Promise<Array<{ id: string; engine: string }>> {
  const response = await fetch(`${baseUrl}/voices`, { signal: AbortSignal.timeout(10_000) });
  return ((await response.json()) as { voices: Array<{ id: string; engine: string }> }).voices;
}

/** Those of `wanted` that GET /voices lists, in `wanted`'s order, each after one short request so that no engine starts cold. */
export async function warmVoices(service: Service, wanted: readonly string[]): Promise<string[]> {
  const listed = new Set((await listVoices(service.baseUrl)).map((voice) => voice.id));
  const voices = wanted.filter((voice) => listed.has(voice));
  for (const voice of voices) await postOk(`${service.baseUrl}/tts`, { text: textOf(200), voice, format: 'mp3' });
  return voices;
}

/** The gauges of a Prometheus text exposition, by name (unlabelled samples only). */
export async function scrapeMetrics(baseUrl: string): Promise<Map<string, number>> {
  const response = await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(10_000) });
  const values = new Map<string, number>();
  for (const line of (await response.text()).split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*) (\S+)$/.exec(line);
    if (match) values.set(match[1] as string, Number(match[2]));
  }
  return values;
}

/** A `Vm…` field of /proc/<pid>/status in kB, or undefined once the process is gone. */
export async function procStatusKb(pid: number, field: 'VmHWM' | 'VmRSS'): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  const match = status && new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match ? Number(match[1]) : undefined;
}
