import { createHash } from 'node:crypto';
import os from 'node:os';
import { resolveMediaTools } from '../src/media-tools.js';
import { runProcess } from '../src/process.js';

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

/** What the service's code is right now: HEAD and the working tree's changes to it. */
export async function sourceFingerprint(): Promise<string> {
  const state = await Promise.all([output('git', ['rev-parse', 'HEAD']), output('git', ['diff', 'HEAD', '--', 'src', 'package.json', 'package-lock.json'])]);
  return createHash('sha256').update(state.join('\n')).digest('hex');
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
