import { readdirSync, readFileSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { resolveMediaTools } from '../src/media/tools.js';

const MB = 1024;

/** A child process of the server, by what it runs; ffmpeg and ffprobe are measured by their wrappers instead. */
export type ChildKind = 'eSpeak NG host (node)' | 'Flite host (node)' | 'Piper host (node)' | 'RHVoice host (node)' | 'Festival' | 'esbuild (tsx loader)' | 'ffmpeg' | 'other';

function kindOf(commandLine: string): ChildKind {
  if (commandLine.includes('espeak-host')) return 'eSpeak NG host (node)';
  if (commandLine.includes('flite-host')) return 'Flite host (node)';
  if (commandLine.includes('piper-host')) return 'Piper host (node)';
  if (commandLine.includes('rhvoice-host')) return 'RHVoice host (node)';
  if (/(^|\/)festival\b/.test(commandLine)) return 'Festival';
  if (/(^|\/)esbuild\b/.test(commandLine)) return 'esbuild (tsx loader)';
  if (/(^|\/)(ffmpeg|ffprobe|time)\b/.test(commandLine)) return 'ffmpeg';
  return 'other';
}

function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined; // gone meanwhile
  }
}

function kb(status: string | undefined, field: 'VmHWM' | 'VmRSS'): number | undefined {
  const match = status && new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match ? Number(match[1]) : undefined;
}

/** A process's resident memory now (VmRSS), kB; undefined once it is gone. */
export function residentKb(pid: number): number | undefined {
  return kb(readProc(pid, 'status'), 'VmRSS');
}

/** Every live descendant of `root`, with its kind, its resident memory now (VmRSS) and its peak so far (VmHWM), kB. */
export function descendants(root: number): Array<{ pid: number; kind: ChildKind; hwmKb: number; rssKb: number }> {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProc(Number(entry), 'stat');
    // "pid (comm) state ppid …": comm may hold spaces and parentheses.
    const ppid = stat && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid) children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const found: Array<{ pid: number; kind: ChildKind; hwmKb: number; rssKb: number }> = [];
  const rootCommandLine = readProc(root, 'cmdline');
  const pending = [...(children.get(root) ?? [])];
  for (let pid = pending.shift(); pid !== undefined; pid = pending.shift()) {
    pending.push(...(children.get(pid) ?? []));
    const status = readProc(pid, 'status');
    const hwmKb = kb(status, 'VmHWM');
    const commandLine = readProc(pid, 'cmdline');
    // A child caught between fork and exec still shows the parent's command line: not a process of its own yet.
    if (hwmKb === undefined || !commandLine || commandLine === rootCommandLine) continue;
    found.push({ pid, kind: kindOf(commandLine.replaceAll('\0', ' ')), hwmKb, rssKb: kb(status, 'VmRSS') ?? 0 });
  }
  return found;
}

/** Largest VmHWM per kind among the descendants alive now, in MB. */
export function peaksByKind(root: number): Partial<Record<ChildKind, number>> {
  const peaks: Partial<Record<ChildKind, number>> = {};
  for (const child of descendants(root)) peaks[child.kind] = Math.max(peaks[child.kind] ?? 0, Math.round(child.hwmKb / MB));
  return peaks;
}

/**
 * Polls the process tree under `root` every `intervalMs`: the largest VmHWM each kind of child reached (a child
 * that grows in its last interval before exiting is under-counted by that much), and the root's largest VmRSS
 * since the last window().
 */
export class TreeSampler {
  private readonly peaks: Partial<Record<ChildKind, number>> = {};
  private rootRssKb = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly root: number,
    intervalMs = 20,
  ) {
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  sample(): void {
    for (const child of descendants(this.root)) this.peaks[child.kind] = Math.max(this.peaks[child.kind] ?? 0, child.hwmKb);
    this.rootRssKb = Math.max(this.rootRssKb, kb(readProc(this.root, 'status'), 'VmRSS') ?? 0);
  }

  /** The root's largest RSS since the previous window (MB), and a new window. */
  window(): number {
    this.sample();
    const rss = this.rootRssKb;
    this.rootRssKb = 0;
    return Math.round(rss / MB);
  }

  stop(): Partial<Record<ChildKind, number>> {
    clearInterval(this.timer);
    this.sample();
    return Object.fromEntries(Object.entries(this.peaks).map(([kind, value]) => [kind, Math.round(value / MB)]));
  }
}

/** What an ffmpeg run did, from its arguments. */
export type FfmpegRole = 'mp3 encode' | 'AAC soundtrack' | 'picture encode' | 'naive render' | 'ffprobe' | 'capability check' | 'other';

function roleOf(commandLine: string): FfmpegRole {
  if (/ffprobe /.test(commandLine)) return 'ffprobe';
  // fluent-ffmpeg asks once per process what the binary supports.
  if (/ -(formats|encoders|codecs|filters)$/.test(commandLine)) return 'capability check';
  if (commandLine.includes('-preset medium')) return 'naive render';
  if (commandLine.includes('libx264')) return 'picture encode';
  if (commandLine.includes('libmp3lame')) return 'mp3 encode';
  // The soundtrack's encoder (its ADTS to a file and to the decoder that hears it); the MP4 is written in the server.
  if (commandLine.includes('-c:a aac')) return 'AAC soundtrack';
  return 'other';
}

export interface FfmpegPeak {
  role: FfmpegRole;
  mb: number;
  /** Wall time of the run (GNU time's `%e`, 10 ms resolution). */
  seconds: number;
}

/**
 * ffmpeg and ffprobe behind `/usr/bin/time -f '%M %e'` (GNU time: the child's exact peak RSS and its wall time), for a server
 * started with FFMPEG_PATH / FFPROBE_PATH pointing at them. The wrappers cost a fork and an exec per run, so only
 * the memory pass uses them.
 */
export class MeasuredFfmpeg {
  private constructor(
    readonly ffmpeg: string,
    readonly ffprobe: string,
    private readonly log: string,
  ) {}

  static async create(dir: string): Promise<MeasuredFfmpeg> {
    const tools = resolveMediaTools();
    const log = path.join(dir, 'ffmpeg-peaks.txt');
    const wrap = async (name: string, binary: string) => {
      const file = path.join(dir, name);
      await writeFile(file, `#!/bin/sh\nexec /usr/bin/time -a -o ${JSON.stringify(log)} -f '%M %e %C' ${JSON.stringify(binary)} "$@"\n`);
      await chmod(file, 0o755);
      return file;
    };
    await writeFile(log, '');
    return new MeasuredFfmpeg(await wrap('ffmpeg', tools.ffmpeg), await wrap('ffprobe', tools.ffprobe), log);
  }

  /** The runs that ended since the last call (the readiness probe's `-version` runs left out). */
  async take(): Promise<FfmpegPeak[]> {
    const runs = (await readFile(this.log, 'utf8')).split('\n').flatMap((line) => {
      const match = /^(\d+) ([\d.]+) (.*)$/.exec(line);
      return match && !line.endsWith(' -version') ? [match] : [];
    });
    await writeFile(this.log, '');
    return runs.map(([, kilobytes, seconds, commandLine]) => ({ role: roleOf(commandLine as string), mb: Math.round(Number(kilobytes) / MB), seconds: Number(seconds) }));
  }
}
