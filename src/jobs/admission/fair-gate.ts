/**
 * At most `total` tasks at once, at most `perKey` of them for one key; the rest wait, the keys taking turns, so
 * one key's thousand tasks delay another key's next task by one turn, not by a thousand.
 */
export class FairGate {
  private running = 0;
  private readonly runningByKey = new Map<string, number>();
  /** Waiting tasks by key; a Map keeps the keys in turn order (a key that was served goes to the back). */
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(
    private readonly total: number,
    private readonly perKey: number,
  ) {}

  /** Tasks running now, and waiting. */
  get stats(): { running: number; waiting: number } {
    let waiting = 0;
    for (const tasks of this.waiting.values()) waiting += tasks.length;
    return { running: this.running, waiting };
  }

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    await this.acquire(key);
    try {
      return await task();
    } finally {
      this.release(key);
    }
  }

  private acquire(key: string): Promise<void> {
    if (this.running < this.total && (this.runningByKey.get(key) ?? 0) < this.perKey && !this.waiting.has(key)) {
      this.take(key);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const queue = this.waiting.get(key) ?? [];
      queue.push(resolve);
      this.waiting.set(key, queue);
    });
  }

  private take(key: string): void {
    this.running += 1;
    this.runningByKey.set(key, (this.runningByKey.get(key) ?? 0) + 1);
  }

  private release(key: string): void {
    this.running -= 1;
    const left = (this.runningByKey.get(key) ?? 1) - 1;
    if (left > 0) this.runningByKey.set(key, left);
    else this.runningByKey.delete(key);
    this.startNext();
  }

  /** Starts waiting tasks while there is room: the first key in turn below its share, which then goes to the back. */
  private startNext(): void {
    while (this.running < this.total) {
      const key = [...this.waiting.keys()].find((candidate) => (this.runningByKey.get(candidate) ?? 0) < this.perKey);
      if (key === undefined) return;
      const queue = this.waiting.get(key) ?? [];
      const start = queue.shift();
      this.waiting.delete(key);
      if (queue.length > 0) this.waiting.set(key, queue);
      if (!start) continue;
      this.take(key);
      start();
    }
  }
}
