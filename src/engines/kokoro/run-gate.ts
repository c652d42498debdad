/** At most `limit` runs at once, the rest waiting in order; a waiting run whose signal aborts leaves with its reason. */
export class RunGate {
  private active = 0;
  private readonly waiting: { start: () => void; signal: AbortSignal; onAbort: () => void }[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(signal: AbortSignal, task: () => Promise<T>): Promise<T> {
    if (signal.aborted) throw signal.reason;
    if (this.active >= this.limit) await this.turn(signal);
    else this.active += 1;
    try {
      return await task();
    } finally {
      this.next();
    }
  }

  /** Resolves once a run has handed its place on (the place stays counted in `active`). */
  private turn(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const entry = {
        signal,
        start: () => {
          signal.removeEventListener('abort', entry.onAbort);
          resolve();
        },
        onAbort: () => {
          this.waiting.splice(this.waiting.indexOf(entry), 1);
          reject(signal.reason);
        },
      };
      signal.addEventListener('abort', entry.onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  private next(): void {
    const waiting = this.waiting.shift();
    if (waiting) waiting.start();
    else this.active -= 1;
  }
}
