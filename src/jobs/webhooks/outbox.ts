import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../config.js';
import { content, writeAtomically } from '../../storage/atomic-write.js';
import { FairGate } from '../admission/fair-gate.js';
import { WEBHOOK_ATTEMPTS, attemptWebhook, retryDelayMs, type WebhookEvent, type WebhookLogger } from './delivery.js';

/** A delivery a process promised when a job with a webhook finished: kept until it is made or given up. */
export interface PendingDelivery {
  /** Voxreel-Delivery: `<job id>.<state>`, the same on every attempt and in every process. */
  deliveryId: string;
  url: string;
  event: WebhookEvent;
  /** The JSON body, fixed when the job finished. */
  body: string;
  /** Whose job it was: attempts in flight are bounded per client. */
  clientId: string;
}

/** Where promised deliveries wait: on disk (one process), or in Redis (any process delivers). */
export interface WebhookOutbox {
  add(delivery: PendingDelivery): Promise<void>;
  /** Stops attempting; what is not delivered stays to be resumed by the next process. */
  close(): Promise<void>;
}

export type OutboxLogger = WebhookLogger & { info(obj: object, msg: string): void };

/** What an attempt came to, for an outbox: done (delivered or given up for good), or another attempt after `retryInMs`. */
export type AttemptResult = { done: true } | { done: false; retryInMs: number };

/**
 * One attempt of a pending delivery, as both outboxes make it: signed afresh, bounded (WEBHOOK_CONCURRENCY in all,
 * WEBHOOK_CLIENT_CONCURRENCY per client, the clients taking turns), and logged when it ends the delivery.
 */
export class DeliveryAttempts {
  private readonly gate: FairGate;

  constructor(
    private readonly webhooks: Config['webhooks'],
    private readonly logger: OutboxLogger,
  ) {
    this.gate = new FairGate(webhooks.concurrency, webhooks.clientConcurrency);
  }

  /** Attempt number `attempt` (from 1) of `delivery`. */
  async attempt(delivery: PendingDelivery, attempt: number, signal?: AbortSignal): Promise<AttemptResult> {
    const { secret, allowPrivate } = this.webhooks;
    const log = { deliveryId: delivery.deliveryId, event: delivery.event, attempts: attempt };
    if (!secret) {
      this.logger.warn(log, 'webhook given up: this process has no WEBHOOK_SECRET to sign it with');
      return { done: true };
    }
    const last = attempt >= WEBHOOK_ATTEMPTS;
    const outcome = await attemptWebhook(
      new URL(delivery.url),
      delivery.body,
      {
        secret,
        allowPrivate,
        event: delivery.event,
        deliveryId: delivery.deliveryId,
        signal,
        logger: this.logger,
        throttle: (run) => this.gate.run(delivery.clientId, run),
      },
      attempt,
      last,
    );
    if (outcome.kind === 'delivered') {
      this.logger.info({ ...log, status: outcome.status }, 'webhook delivered');
      return { done: true };
    }
    if (outcome.kind === 'give-up' || last) {
      this.logger.warn({ ...log, status: outcome.status, error: outcome.error }, 'webhook given up');
      return { done: true };
    }
    return { done: false, retryInMs: retryDelayMs(outcome, attempt) };
  }
}

/** A delivery on disk: what it is, and where it stands. */
interface StoredDelivery extends PendingDelivery {
  attempts: number;
  dueAt: number;
}

/** Delivery ids are `<base64url job id>.<state>`: safe as file names, and checked to be. */
const SAFE_ID = /^[A-Za-z0-9_-]+\.[a-z]+$/;

/**
 * The embedded outbox: each pending delivery is a file (`<delivery id>.json`, written atomically) in a private
 * folder, rewritten after each failed attempt with its next time, and removed once delivered or given up. A
 * process that stops (SIGTERM, a crash, kill -9) leaves its files; the next one on the folder resumes them. An
 * attempt cut off by a stop may have reached the receiver and is made again: receivers drop repeats by
 * Voxreel-Delivery.
 */
export class DiskOutbox implements WebhookOutbox {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly stopping = new AbortController();

  constructor(
    private readonly dir: string,
    private readonly attempts: DeliveryAttempts,
    private readonly logger: OutboxLogger,
  ) {}

  /** Creates the folder and resumes the deliveries an earlier process left. */
  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    let resumed = 0;
    for (const name of await readdir(this.dir)) {
      const file = path.join(this.dir, name);
      // A temporary file of a write cut off by a crash: the delivery's previous state is still in its .json.
      if (!name.endsWith('.json')) await rm(file, { force: true });
      const stored = name.endsWith('.json') ? await this.read(file) : undefined;
      if (!stored) continue;
      this.schedule(stored);
      resumed += 1;
    }
    if (resumed > 0) this.logger.info({ deliveries: resumed }, 'webhook deliveries resumed');
  }

  async add(delivery: PendingDelivery): Promise<void> {
    if (!SAFE_ID.test(delivery.deliveryId)) throw new Error(`unexpected delivery id ${delivery.deliveryId}`);
    const stored: StoredDelivery = { ...delivery, attempts: 0, dueAt: Date.now() };
    await this.write(stored);
    this.schedule(stored);
  }

  async close(): Promise<void> {
    this.stopping.abort();
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await Promise.all(this.inFlight);
  }

  private schedule(stored: StoredDelivery): void {
    if (this.stopping.signal.aborted) return;
    clearTimeout(this.timers.get(stored.deliveryId));
    const timer = setTimeout(() => {
      this.timers.delete(stored.deliveryId);
      const run = this.run(stored).catch((error: unknown) => this.logger.warn({ err: error, deliveryId: stored.deliveryId }, 'webhook outbox failed'));
      this.inFlight.add(run);
      void run.finally(() => this.inFlight.delete(run));
    }, Math.max(0, stored.dueAt - Date.now()));
    timer.unref();
    this.timers.set(stored.deliveryId, timer);
  }

  private async run(stored: StoredDelivery): Promise<void> {
    const result = await this.attempts.attempt(stored, stored.attempts + 1, this.stopping.signal).catch((error: unknown) => {
      // Stopped mid-attempt: the file stays as it was, for the next process.
      if (this.stopping.signal.aborted) return undefined;
      throw error;
    });
    if (!result) return;
    if (result.done) {
      await rm(this.fileOf(stored.deliveryId), { force: true });
      return;
    }
    const next = { ...stored, attempts: stored.attempts + 1, dueAt: Date.now() + result.retryInMs };
    await this.write(next);
    this.schedule(next);
  }

  private async read(file: string): Promise<StoredDelivery | undefined> {
    try {
      const stored = JSON.parse(await readFile(file, 'utf8')) as StoredDelivery;
      return SAFE_ID.test(stored.deliveryId) && typeof stored.url === 'string' && typeof stored.body === 'string' ? stored : undefined;
    } catch {
      return undefined;
    }
  }

  private write(stored: StoredDelivery): Promise<void> {
    return writeAtomically(this.fileOf(stored.deliveryId), this.dir, content(JSON.stringify(stored)), { mode: 0o600 });
  }

  private fileOf(deliveryId: string): string {
    return path.join(this.dir, `${deliveryId}.json`);
  }
}
