// Where a start spends its time, per process kind: each is started with `node --cpu-prof` from the compiled build
// and timed to ready, and its profile's heaviest self-time entries are listed. Alone:
// `node --import tsx bench/start-profile.ts [--runs 3] [--cwd <checkout>]` (a checkout with dist/ built).
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type * as PiperCatalog from '../src/engines/piper/catalog.js';
import type * as Festival from '../src/engines/festival/festival-host.js';

export interface ProfileEntry {
  /** `function (file)`: a package's file as `package/file`, voxreel's own as its path under dist/. */
  entry: string;
  ms: number;
}

export interface StartProfileRow {
  kind: string;
  /** Median, process start to ready: /readyz 200 (api), its ready line (worker), its ready message (Node hosts). */
  readyMs: number | null;
  /** Piper's host only: to its first speech with the start-up voice (the model loaded). */
  warmMs?: number;
  /** The run with the median time to ready; empty where the process is not Node (Festival). */
  top: ProfileEntry[];
}

interface Started {
  readyMs: number;
  warmMs?: number;
  stop(): Promise<void>;
}

interface Kind {
  kind: string;
  start(root: string, profileDir: string): Promise<Started>;
}

const TOP = 8;
const READY_TIMEOUT_MS = 60_000;
const NOT_WORK = new Set(['(idle)', '(root)']);

/**
 * Self time per `function (file)`, heaviest first, from a V8 `.cpuprofile`. Node's own functions (compiling a module,
 * reading a file) and the engine's (the garbage collector) are charged to the nearest caller in a file of the
 * program, `← caller (file)`, so that a module's loading shows under the module that loads it.
 */
export function topSelfTime(profile: CpuProfile, root: string, count = TOP): ProfileEntry[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const programCaller = (id: number): string | undefined => {
    for (let at = parents.get(id); at !== undefined; at = parents.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame?.url.startsWith('file:')) return describe(frame, root);
    }
    return undefined;
  };
  const totals = new Map<string, number>();
  profile.samples.forEach((id, index) => {
    const frame = byId.get(id)?.callFrame;
    if (!frame || NOT_WORK.has(frame.functionName)) return;
    const own = describe(frame, root);
    const caller = frame.url.startsWith('file:') ? undefined : programCaller(id);
    const key = caller ? `${own} ← ${caller}` : own;
    totals.set(key, (totals.get(key) ?? 0) + (profile.timeDeltas[index] ?? 0) / 1000);
  });
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([entry, ms]) => ({ entry, ms: Math.round(ms) }));
}

function describe(frame: { functionName: string; url: string }, root: string): string {
  const name = frame.functionName || '(anonymous)';
  if (!frame.url) return name;
  return frame.url.startsWith('file:') ? `${name} (${shortUrl(frame.url, root)})` : `${name} (${frame.url})`;
}

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string }; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
}

function shortUrl(url: string, root: string): string {
  const file = new URL(url).pathname;
  const modules = file.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [scopeOrName = '', ...rest] = file.slice(modules + '/node_modules/'.length).split('/');
    const name = scopeOrName.startsWith('@') ? `${scopeOrName}/${rest.shift() ?? ''}` : scopeOrName;
    return `${name}/${rest.at(-1) ?? ''}`;
  }
  const relative = path.relative(path.join(root, 'dist'), file);
  return relative.startsWith('..') ? file : relative;
}

const fileEnv = (dir: string) => ({ OUTPUT_DIR: path.join(dir, 'output'), SCRATCH_DIR: path.join(dir, 'scratch'), LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1' });

/** An entry point (`dist/server.js`, `dist/worker.js`) as a user starts it, profiled; ready when `ready` resolves. */
async function startEntry(root: string, profileDir: string, entry: string, env: Record<string, string>, ready: (line: Record<string, unknown>, started: number) => Promise<number> | undefined): Promise<Started> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, entry], {
    cwd: root,
    env: { ...process.env, ...fileEnv(profileDir), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  const readyMs = await new Promise<number>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`${entry} not ready in ${READY_TIMEOUT_MS} ms: ${stderr}`)), READY_TIMEOUT_MS);
    void exited.then(() => reject(new Error(`${entry} exited before it was ready: ${stderr}`)));
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(line) as Record<string, unknown>;
        } catch {
          continue;
        }
        void ready(parsed, started)?.then((ms) => {
          clearTimeout(timer);
          resolve(ms);
        }, reject);
      }
    });
  });
  return { readyMs, stop: () => stopAndWait(child, exited) };
}

async function stopAndWait(child: ChildProcess, exited: Promise<void>): Promise<void> {
  child.kill('SIGTERM');
  await exited;
}

/** Polls /readyz from the moment the API listens until it answers 200. */
async function untilReady(address: string, started: number): Promise<number> {
  for (;;) {
    const response = await fetch(`${address}/readyz`).catch(() => undefined);
    if (response?.status === 200) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A Node engine host forked as its engine forks it, profiled; ready at its ready message. */
async function startHost(root: string, profileDir: string, name: string, args: string[] = [], warmJob?: unknown): Promise<Started> {
  const module = path.join(root, 'dist', 'engines', name.replace(/-host$/, ''), `${name}.js`);
  const started = performance.now();
  const child = fork(module, args, {
    execArgv: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
    serialization: 'advanced',
    env: { ...process.env, TMPDIR: profileDir },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const readyMs = await answer(child, (message) => message.ready === true, started);
  let warmMs: number | undefined;
  if (warmJob) {
    child.send({ id: 1, job: warmJob });
    warmMs = await answer(child, (message) => message.id === 1, started);
  }
  return {
    readyMs,
    ...(warmMs === undefined ? {} : { warmMs }),
    // A host exits when its parent disconnects (host-runtime.ts), which writes its profile.
    stop: async () => {
      child.disconnect();
      await exited;
    },
  };
}

function answer(child: ChildProcess, is: (message: Record<string, unknown>) => boolean, started: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown) => {
      if (typeof message !== 'object' || message === null || !is(message as Record<string, unknown>)) return;
      child.off('message', onMessage);
      if ((message as { ok?: boolean }).ok === false) reject(new Error(String((message as { error?: unknown }).error)));
      else resolve(performance.now() - started);
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`host exited (${code}) before it answered`)));
  });
}

/** The start-up voice's model as the engine names it to Piper's host (its third argument), from the compiled catalog. */
async function startUpModel(root: string): Promise<Record<string, unknown> | undefined> {
  const { PiperVoiceCatalog } = (await import(pathToFileURL(path.join(root, 'dist/engines/piper/catalog.js')).href)) as typeof PiperCatalog;
  const catalog = await PiperVoiceCatalog.scan(path.resolve(root, process.env.VOICES_DIR ?? 'voices'));
  const voice = catalog.list()[0];
  return voice ? (catalog.find(voice.id)?.model as unknown as Record<string, unknown>) : undefined;
}

async function startRedis(): Promise<{ url: string; stop(): Promise<void> }> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('Ready to accept') && resolve());
    child.once('exit', () => reject(new Error('redis-server did not start')));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { url: `redis://127.0.0.1:${port}`, stop: () => stopAndWait(child, exited) };
}

function kinds(root: string, redisUrl: string | undefined): Kind[] {
  const piperModel = startUpModel(root);
  return [
    {
      kind: 'api (node dist/server.js)',
      start: (root, dir) =>
        startEntry(root, dir, 'dist/server.js', {}, (line, started) =>
          typeof line.msg === 'string' && line.msg.startsWith('Server listening at ') ? untilReady(line.msg.slice('Server listening at '.length), started) : undefined,
        ),
    },
    ...(redisUrl
      ? [
          {
            kind: 'worker (voxreel worker)',
            start: (root: string, dir: string) =>
              startEntry(root, dir, 'dist/worker.js', { REDIS_URL: redisUrl, CDN_URL: 'http://127.0.0.1:1/files' }, (line, started) =>
                line.msg === 'voxreel worker ready' ? Promise.resolve(performance.now() - started) : undefined,
              ),
          },
        ]
      : []),
    {
      kind: 'piper-host',
      start: async (root, dir) => {
        const model = await piperModel;
        const job = model && { kind: 'synthesize', ticket: 1, voice: model.modelPath, model, text: 'Ready.', lengthScale: 1 };
        return startHost(root, dir, 'piper-host', ['1', ...(model ? [JSON.stringify(model)] : [])], job);
      },
    },
    { kind: 'espeak-host', start: (root, dir) => startHost(root, dir, 'espeak-host') },
    { kind: 'flite-host', start: (root, dir) => startHost(root, dir, 'flite-host') },
    { kind: 'rhvoice-host', start: (root, dir) => startHost(root, dir, 'rhvoice-host') },
    {
      kind: 'festival (native)',
      start: async () => {
        const { FestivalHost } = (await import(pathToFileURL(path.join(root, 'dist/engines/festival/festival-host.js')).href)) as typeof Festival;
        const started = performance.now();
        const host = await FestivalHost.start({ festivalPath: 'festival', voiceCommand: '(voice_cmu_us_slt_arctic_hts)', sampleRate: 48_000 });
        return { readyMs: performance.now() - started, stop: () => host.close() };
      },
    },
  ];
}

/** Starts each process kind `runs` times in turn; a kind that cannot start here (no RHVoice, no Festival) is left out. */
export async function profileStarts(options: { root?: string; runs?: number; log?: (line: string) => void } = {}): Promise<StartProfileRow[]> {
  const root = path.resolve(options.root ?? process.cwd());
  const runs = options.runs ?? 3;
  const redis = await startRedis().catch(() => undefined);
  const rows: StartProfileRow[] = [];
  try {
    for (const kind of kinds(root, redis?.url)) {
      const measured: Array<{ readyMs: number; warmMs?: number; top: ProfileEntry[] }> = [];
      for (let run = 0; run < runs; run++) {
        const dir = await mkdtemp(path.join(os.tmpdir(), 'voxreel-start-profile-'));
        try {
          const started = await kind.start(root, dir);
          await started.stop();
          const profiles = (await readdir(dir)).filter((name) => name.endsWith('.cpuprofile'));
          // The main thread's profile (thread id 0); Piper's inference thread writes one of its own.
          const main = profiles.find((name) => name.split('.').at(-3) === '0');
          const top = main ? topSelfTime(JSON.parse(await readFile(path.join(dir, main), 'utf8')) as CpuProfile, root) : [];
          measured.push({ readyMs: started.readyMs, ...(started.warmMs === undefined ? {} : { warmMs: started.warmMs }), top });
        } catch (error) {
          options.log?.(`${kind.kind}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
          break;
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }
      if (measured.length === 0) continue;
      measured.sort((a, b) => a.readyMs - b.readyMs);
      const median = measured[Math.floor((measured.length - 1) / 2)]!;
      const warms = measured.flatMap((run) => (run.warmMs === undefined ? [] : [run.warmMs])).sort((a, b) => a - b);
      const warm = warms[Math.floor((warms.length - 1) / 2)];
      rows.push({ kind: kind.kind, readyMs: Math.round(median.readyMs), ...(warm === undefined ? {} : { warmMs: Math.round(warm) }), top: median.top });
      options.log?.(`${kind.kind}: ready ${Math.round(median.readyMs)} ms`);
    }
  } finally {
    await redis?.stop();
  }
  return rows;
}

/** The rows as a Markdown table: one line per entry, the kind and its times on its first. */
export function startProfileTable(rows: readonly StartProfileRow[]): string {
  const lines = ['| Process | Ready (ms) | Self time, top entries | ms |', '| --- | ---: | --- | ---: |'];
  for (const row of rows) {
    const ready = `${row.readyMs ?? '–'}${row.warmMs === undefined ? '' : ` (warm ${row.warmMs})`}`;
    if (row.top.length === 0) lines.push(`| ${row.kind} | ${ready} | (not a Node process) | |`);
    row.top.forEach((entry, index) => lines.push(`| ${index === 0 ? row.kind : ''} | ${index === 0 ? ready : ''} | \`${entry.entry}\` | ${entry.ms} |`));
  }
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, cwd: { type: 'string' } } });
  const rows = await profileStarts({ root: values.cwd, runs: Number(values.runs), log: (line) => console.error(line) });
  console.log(startProfileTable(rows));
}
