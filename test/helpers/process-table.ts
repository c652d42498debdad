import { execFileSync } from 'node:child_process';

/** One process as `ps` lists it. */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  pgid: number;
  /** The command line. */
  args: string;
}

const PS_ARGS = ['-eo', 'pid=,ppid=,pgid=,args='];

/** Every process on the machine right now, except the `ps` that lists them. */
export function processTable(): ProcessEntry[] {
  const self = `ps ${PS_ARGS.join(' ')}`;
  return execFileSync('ps', PS_ARGS, { encoding: 'utf8' })
    .split('\n')
    .flatMap((line) => {
      const [, pid, ppid, pgid, args = ''] = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(.*)$/.exec(line) ?? [];
      return pid && args !== self ? [{ pid: Number(pid), ppid: Number(ppid), pgid: Number(pgid), args }] : [];
    });
}

/** The children of `pid`, their children, and so on. */
export function descendantsOf(pid: number, processes = processTable()): ProcessEntry[] {
  const found: ProcessEntry[] = [];
  for (let parents = new Set([pid]); parents.size > 0; ) {
    const children = processes.filter((entry) => parents.has(entry.ppid));
    found.push(...children);
    parents = new Set(children.map((entry) => entry.pid));
  }
  return found;
}

/** The processes whose command line contains `pattern` (a string) or matches it (a RegExp), among `processes`. */
export function processesMatching(pattern: string | RegExp, processes = processTable()): ProcessEntry[] {
  return processes.filter(({ args }) => (typeof pattern === 'string' ? args.includes(pattern) : pattern.test(args)));
}

/** Whether a process with this PID exists (a zombie not yet reaped counts). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
