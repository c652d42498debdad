import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveMediaTools } from '../src/media/tools.js';
import { runProcess } from '../src/media/process.js';

export interface MachineFacts {
  date: string;
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  kernel: string;
  node: string;
  ffmpeg: string;
  /** 1, 5 and 15-minute load averages when the benchmark started and when it ended: other work on the machine. */
  loadAverage: { start: number[]; end: number[] };
  commit: string;
  /** The checkout had uncommitted changes: the results are of the working tree, not of `commit` alone. */
  uncommittedChanges: boolean;
  /** The service's code (src/, package files) was not the same at the end as at the start: the run mixes two versions. */
  sourceChangedDuringRun: boolean;
}

async function output(command: string, args: string[]): Promise<string> {
  return (await runProcess(command, args, { timeoutMs: 10_000 }).then(({ stdout }) => stdout.toString('utf8'), () => '')).trim();
}

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A hash of the service's code as it is on disk now (src/ and the package files), whatever was committed meanwhile. */
export async function sourceFingerprint(): Promise<string> {
  const files = [...(await readdir(path.join(ROOT, 'src'), { recursive: true })).map((file) => path.join('src', file)), 'package.json', 'package-lock.json'].sort();
  const hash = createHash('sha256');
  for (const file of files) {
    const content = await readFile(path.join(ROOT, file)).catch(() => undefined); // a directory, or gone meanwhile
    if (content) hash.update(`${file}\0`).update(content);
  }
  return hash.digest('hex');
}

export async function machineFacts(loadStart: number[], sourceAtStart: string): Promise<MachineFacts> {
  const ffmpeg = (await output(resolveMediaTools().ffmpeg, ['-version'])).split('\n')[0] ?? '';
  return {
    date: new Date().toISOString(),
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    ffmpeg: ffmpeg.replace(/ Copyright.*$/, ''),
    loadAverage: { start: loadStart.map(twoDigits), end: os.loadavg().map(twoDigits) },
    commit: (await output('git', ['rev-parse', '--short', 'HEAD'])) || 'unknown',
    uncommittedChanges: (await output('git', ['status', '--porcelain', '--untracked-files=no'])) !== '',
    sourceChangedDuringRun: (await sourceFingerprint()) !== sourceAtStart,
  };
}

function twoDigits(value: number): number {
  return Math.round(value * 100) / 100;
}
