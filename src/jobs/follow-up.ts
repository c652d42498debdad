import type { JobResults } from './job-results.js';
import type { Config } from '../config.js';
import type { JobView } from './queue.js';
import type { JobOutcome, JobSpec } from './spec.js';
import { deliverWebhook, type WebhookLogger } from './webhooks.js';
import { FairGate } from './fair-gate.js';

/** A job that has just finished, as whichever process ran it saw it. */
export interface FinishedJob {
  spec: JobSpec;
  /** Whose job it was (the client id). */
  clientId: string;
  view: JobView;
  outcome?: JobOutcome;
  cacheKey?: string;
  webhookUrl?: string;
}

/**
 * What follows a finished job wherever it ran: a success is remembered by the request cache, and a job with a
 * webhook has its view POSTed there, signed, retried in the background (the job's slot is not held for it).
 */
export class JobFollowUp {
  private readonly stopping = new AbortController();
  private readonly deliveries = new Set<Promise<unknown>>();
  /** Attempts in flight: WEBHOOK_CONCURRENCY in all, WEBHOOK_CLIENT_CONCURRENCY per client, the clients taking turns. */
  private readonly attempts: FairGate;

  constructor(
    private readonly results: JobResults,
    private readonly webhooks: Config['webhooks'],
    private readonly logger: WebhookLogger & { info(obj: object, msg: string): void },
  ) {
    this.attempts = new FairGate(webhooks.concurrency, webhooks.clientConcurrency);
  }

  async finished(job: FinishedJob): Promise<void> {
    if (job.outcome) await this.results.remember(job.cacheKey, job.outcome);
    if (job.webhookUrl && this.webhooks.secret) this.deliver(new URL(job.webhookUrl), job.view, this.webhooks.secret, job.clientId);
  }

  /** Webhook attempts in flight now, and waiting for their turn. */
  get deliveryStats(): { running: number; waiting: number } {
    return this.attempts.stats;
  }

  private deliver(url: URL, view: JobView, secret: string, clientId: string): void {
    const event = view.state === 'succeeded' ? 'job.succeeded' : view.state === 'cancelled' ? 'job.cancelled' : 'job.failed';
    const delivery = deliverWebhook(url, { event, job: view }, {
      secret,
      allowPrivate: this.webhooks.allowPrivate,
      event,
      deliveryId: `${view.id}.${view.state}`,
      signal: this.stopping.signal,
      throttle: (attempt) => this.attempts.run(clientId, attempt),
      logger: this.logger,
    }).then(
      (result) => this.logger.info({ job: view.id, event, ...result }, result.delivered ? 'webhook delivered' : 'webhook given up'),
      () => undefined,
    );
    this.deliveries.add(delivery);
    void delivery.finally(() => this.deliveries.delete(delivery));
  }

  /** Stops retrying deliveries (shutdown); one in flight is abandoned. */
  async close(): Promise<void> {
    this.stopping.abort();
    await Promise.all(this.deliveries);
  }
}
