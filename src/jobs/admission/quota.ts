import { AppError } from '../../errors.js';

export interface QuotaOptions {
  /** Jobs one client may have running or queued at once; 0: no cap. */
  maxJobs: number;
  /** Characters of text one client may submit per window; 0: no cap. */
  characters: number;
  windowMs: number;
}

interface ClientUsage {
  jobs: number;
  /** Characters charged in the current window, and when that window ends. */
  characters: number;
  windowEnds: number;
}

/**
 * Fair shares by cost, not by request: a client (an API key, or an address when the service is open) may hold only
 * so many jobs of the shared queue at once and submit only so many characters a window, so one client cannot fill
 * the queue with five-minute videos and lock everyone else out.
 */
export class ClientQuota {
  private readonly clients = new Map<string, ClientUsage>();
  private nextSweep = 0;

  constructor(
    private readonly options: QuotaOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** Charges a job to its client, or refuses it with RATE_LIMITED; call the returned function when the job ends. */
  admit(clientId: string, characters: number): () => void {
    const now = this.now();
    const usage = this.usageOf(clientId, now);
    const { maxJobs, windowMs } = this.options;
    if (maxJobs > 0 && usage.jobs >= maxJobs) {
      throw new AppError('RATE_LIMITED', {
        message: `At most ${maxJobs} jobs per client may run or wait at once; retry when one has finished.`,
        retryAfter: 1,
      });
    }
    if (this.options.characters > 0 && usage.characters + characters > this.options.characters) {
      throw new AppError('RATE_LIMITED', {
        message: `At most ${this.options.characters} characters per client may be submitted every ${windowMs / 1000} s.`,
        retryAfter: Math.max(1, Math.ceil((usage.windowEnds - now) / 1000)),
      });
    }
    usage.jobs += 1;
    usage.characters += characters;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      usage.jobs -= 1;
      this.forgetIdle(clientId, usage, this.now());
    };
  }

  private usageOf(clientId: string, now: number): ClientUsage {
    this.sweep(now);
    let usage = this.clients.get(clientId);
    if (usage && usage.windowEnds <= now) {
      usage.characters = 0;
      usage.windowEnds = now + this.options.windowMs;
    }
    if (!usage) {
      usage = { jobs: 0, characters: 0, windowEnds: now + this.options.windowMs };
      this.clients.set(clientId, usage);
    }
    return usage;
  }

  private forgetIdle(clientId: string, usage: ClientUsage, now: number): void {
    if (usage.jobs === 0 && (usage.characters === 0 || usage.windowEnds <= now)) this.clients.delete(clientId);
  }

  /** Once a window, drops the clients with nothing running whose window has ended, so the map stays small. */
  private sweep(now: number): void {
    if (now < this.nextSweep) return;
    this.nextSweep = now + this.options.windowMs;
    for (const [clientId, usage] of this.clients) this.forgetIdle(clientId, usage, now);
  }
}
