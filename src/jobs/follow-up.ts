import type { JobResults } from './results/job-results.js';
import type { Config } from '../config.js';
import type { JobView } from './queue.js';
import type { JobOutcome, JobSpec } from './spec.js';
import type { WebhookEvent } from './webhooks/delivery.js';
import type { OutboxLogger, WebhookOutbox } from './webhooks/outbox.js';

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
 * webhook has its view put in the outbox, which delivers it signed and retried, and keeps it across a stop of
 * this process (webhooks/outbox.ts).
 */
export class JobFollowUp {
  constructor(
    private readonly results: JobResults,
    private readonly webhooks: Config['webhooks'],
    private readonly outbox: WebhookOutbox,
    private readonly logger: OutboxLogger,
  ) {}

  async finished(job: FinishedJob): Promise<void> {
    if (job.outcome) await this.results.remember(job.cacheKey, job.outcome);
    if (job.webhookUrl && this.webhooks.secret) await this.promise(job.webhookUrl, job.view, job.clientId);
  }

  private async promise(url: string, view: JobView, clientId: string): Promise<void> {
    const event: WebhookEvent = view.state === 'succeeded' ? 'job.succeeded' : view.state === 'cancelled' ? 'job.cancelled' : 'job.failed';
    const deliveryId = `${view.id}.${view.state}`;
    await this.outbox.add({ deliveryId, url, event, body: JSON.stringify({ event, job: view }), clientId }).catch((error: unknown) => {
      this.logger.warn({ err: error, job: view.id, deliveryId }, 'webhook lost: the outbox could not keep it');
    });
  }

  /** Stops delivering; what is not delivered stays in the outbox for the next process. */
  async close(): Promise<void> {
    await this.outbox.close();
  }
}
