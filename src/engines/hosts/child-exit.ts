import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';

const STREAM_DRAIN_MS = 250;

export interface ExitStatus {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

function closed(stream: Readable | null): Promise<void> {
  if (!stream || stream.closed) return Promise.resolve();
  return new Promise((resolve) => stream.once('close', () => resolve()));
}

/**
 * Resolves once the process has exited and its output has been read (for the stderr tail). Not 'close': after
 * the parent disconnects the IPC channel itself, Node never emits 'close'.
 */
export function whenExited(child: ChildProcess): Promise<ExitStatus> {
  return new Promise((resolve) => {
    child.once('error', () => {
      // A program that could not be started at all emits no 'exit'.
      if (child.pid === undefined) resolve({ exitCode: null, signal: null });
    });
    child.once('exit', (exitCode, signal) => {
      const drained = Promise.all([closed(child.stdout), closed(child.stderr)]);
      // Bounded: a grandchild that inherited the pipes could keep them open.
      const timer = setTimeout(() => resolve({ exitCode, signal }), STREAM_DRAIN_MS);
      void drained.then(() => {
        clearTimeout(timer);
        resolve({ exitCode, signal });
      });
    });
  });
}

/**
 * Listeners for a process's exit that can be removed again: a job's `exited.then(...)` would keep the job (and
 * its audio) reachable for as long as a healthy, long-lived process runs.
 */
export class ExitListeners {
  private readonly listeners = new Set<(status: ExitStatus) => void>();

  constructor(exited: Promise<ExitStatus>) {
    void exited.then((status) => {
      for (const listener of [...this.listeners]) listener(status);
      this.listeners.clear();
    });
  }

  /** Calls `listener` once the process has exited; returns the function that removes it. */
  add(listener: (status: ExitStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/**
 * Waits for a started child to say it is ready: `listen` wires whatever tells readiness and returns how to unwire
 * it. A child not ready in time is killed; one that exits first fails the start with `failure`.
 */
export function awaitReady<T>(options: {
  child: ChildProcess;
  exited: Promise<ExitStatus>;
  timeoutMs: number;
  listen: (ready: () => void) => () => void;
  failure: (reason: string, status: ExitStatus) => Error;
  value: T;
}): Promise<T> {
  return new Promise((resolve, reject) => {
    let starting = true;
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      options.child.kill('SIGKILL');
    }, options.timeoutMs);
    const finish = () => {
      starting = false;
      clearTimeout(timer);
      unlisten();
    };
    const unlisten = options.listen(() => {
      if (!starting) return;
      finish();
      resolve(options.value);
    });
    void options.exited.then((status) => {
      if (!starting) return;
      finish();
      reject(options.failure(late ? 'did not start in time' : 'exited while starting', status));
    });
  });
}
