import type { JobResults } from './job-results.js';
import type { Config } from '../config.js';
import type { JobView } from './queue.js';
import type { JobOutcome, JobSpec } from './spec.js';
import { deliverWebhook, type WebhookLogger } from './webhooks.js';

/** A job that has just finished, as whichever process ran it saw it. */
export interface FinishedJob {
  spec: JobSpec;
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

  constructor(
    private readonly results: JobResults,
    private readonly webhooks: Config['webhooks'],
    private readonly logger: WebhookLogger & { info(obj: object, msg: string): void },
  ) {}

  async finished(job: FinishedJob): Promise<void> {
    if (job.outcome) await this.results.remember(job.cacheKey, job.outcome);
    if (job.webhookUrl && this.webhooks.secret) this.deliver(new URL(job.webhookUrl), job.view, this.webhooks.secret);
  }

  private deliver(url: URL, view: JobView, secret: string): void {
    const event = view.state === 'succeeded' ? 'job.succeeded' : view.state === 'cancelled' ? 'job.cancelled' : 'job.failed';
    const delivery = deliverWebhook(url, { event, job: view }, {
      secret,
      allowPrivate: this.webhooks.allowPrivate,
      event,
      deliveryId: `${view.id}.${view.state}`,
      signal: this.stopping.signal,
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
