import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { descendantsOf, type ProcessEntry } from './process-table.js';

export interface RunningServer {
  child: ChildProcessWithoutNullStreams;
  baseUrl: string;
  outputDir: string;
  logs: Array<Record<string, unknown>>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The server's children (engine hosts, ffmpeg) and theirs, right now. */
  children(): ProcessEntry[];
  stop(): Promise<void>;
}

/**
 * How a process is started: from the source through tsx (the tests' default: no build needed), or as `npm start`
 * and `voxreel worker` run it, the compiled build (`bin/voxreel`, which refuses a build older than src/).
 */
export type Build = 'source' | 'compiled';

export interface StartOptions {
  build?: Build;
  /** Time to wait for its ready line (a loaded machine starts slowly); default 30 s. */
  timeoutMs?: number;
  /** The checkout to run (another commit's, for comparisons); default this one. */
  cwd?: string;
}

/** Starts the API as a real process on a free loopback port and waits until it listens. */
export function startServer(env: Record<string, string> = {}, options: StartOptions = {}): Promise<RunningServer> {
  return startService('serve', 'voxreel ready', env, options);
}

/** Starts `voxreel worker` as a real process and waits until it takes jobs (`baseUrl` is empty: it listens on nothing). */
export function startWorker(env: Record<string, string>, options: StartOptions = {}): Promise<RunningServer> {
  return startService('worker', 'voxreel worker ready', env, options);
}

const ENTRIES = { serve: 'src/server.ts', worker: 'src/worker.ts' } as const;

async function startService(command: 'serve' | 'worker', readyMessage: string, env: Record<string, string>, options: StartOptions): Promise<RunningServer> {
  const outputDir = await mkdtemp(path.join(os.tmpdir(), 'voxreel-server-'));
  // The compiled build as users start it: bin/voxreel with its own Node flags (its first line).
  const [program, args] = options.build === 'compiled' ? [path.join(options.cwd ?? process.cwd(), 'bin/voxreel'), [command]] : [process.execPath, ['--import', 'tsx', ENTRIES[command]]];
  const timeoutMs = options.timeoutMs ?? 30_000;
  // The start-up voice is warmed only where a test asks for it: loading a model costs every other test time.
  const child = spawn(program, args, {
    cwd: options.cwd,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', OUTPUT_DIR: outputDir, LOG_LEVEL: 'info', WARM_VOICE: 'none', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const address = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          logs.push(entry);
          if (entry.msg === readyMessage) resolve(String(entry.address ?? ''));
        } catch {
          // not a log line
        }
      }
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    void exited.then(({ code }) => reject(new Error(`server exited with ${String(code)} before listening:\n${stderr}`)));
    setTimeout(() => reject(new Error(`server did not start in ${timeoutMs / 1000} s:\n${stderr}`)), timeoutMs).unref();
  }).catch(async (error: unknown) => {
    // One that never got ready is not left running: no caller has it to stop.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    await rm(outputDir, { recursive: true, force: true });
    throw error;
  });
  return {
    child,
    baseUrl: address,
    outputDir,
    logs,
    exited,
    children: () => (child.pid === undefined ? [] : descendantsOf(child.pid)),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      await rm(outputDir, { recursive: true, force: true });
    },
  };
}
