import type { JobResults } from './results/job-results.js';
import type { Config } from '../config.js';
import { runningView, type JobProgress, type JobView } from './queue.js';
import type { JobOutcome, JobSpec, QueuedOperation } from './spec.js';
import { deliverWebhook, type WebhookEvent } from './webhooks/delivery.js';
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

/** A job as it starts running, for its progress events (webhook_progress). */
export interface RunningJob {
  id: string;
  operation: QueuedOperation;
  createdAt: number;
  startedAt: number;
  webhookUrl?: string;
  webhookProgress?: boolean;
}

/**
 * What follows a finished job wherever it ran: a success is remembered by the request cache, and a job with a
 * webhook has its view put in the outbox, which delivers it signed and retried, and keeps it across a stop of
 * this process (webhooks/outbox.ts).
 */
export class JobFollowUp {
  /** Progress events still being sent, by job: the job's end is told after them, never before. */
  private readonly progressSent = new Map<string, Promise<void>>();

  constructor(
    private readonly results: JobResults,
    private readonly webhooks: Config['webhooks'],
    private readonly outbox: WebhookOutbox,
    private readonly logger: OutboxLogger,
  ) {}

  async finished(job: FinishedJob): Promise<void> {
    if (job.outcome) await this.results.remember(job.cacheKey, job.outcome);
    await this.progressSent.get(job.view.id);
    this.progressSent.delete(job.view.id);
    if (job.webhookUrl && this.webhooks.secret) await this.promise(job.webhookUrl, job.view, job.clientId);
  }

  private async promise(url: string, view: JobView, clientId: string): Promise<void> {
    const event: WebhookEvent = view.state === 'succeeded' ? 'job.succeeded' : view.state === 'cancelled' ? 'job.cancelled' : 'job.failed';
    const deliveryId = `${view.id}.${view.state}`;
    await this.outbox.add({ deliveryId, url, event, body: JSON.stringify({ event, job: view }), clientId }).catch((error: unknown) => {
      this.logger.warn({ err: error, job: view.id, deliveryId }, 'webhook lost: the outbox could not keep it');
    });
  }

  /**
   * What tells a running job's webhook of its progress (webhook_progress): its view, as GET /jobs/{id} shows it,
   * each time another tenth is done (10 % to 90 %), one attempt each and in order (the next one says more, so
   * none is kept in the outbox); none without webhook_progress or a secret to sign with.
   */
  progressReporter(job: RunningJob): ((progress: JobProgress) => void) | undefined {
    const { secret, allowPrivate } = this.webhooks;
    if (!job.webhookUrl || !job.webhookProgress || !secret) return undefined;
    const url = new URL(job.webhookUrl);
    const event: WebhookEvent = 'job.progress';
    let toldTenths = 0;
    return (progress) => {
      const tenths = Math.floor(progress.fraction * 10);
      if (tenths <= toldTenths || tenths >= 10) return;
      toldTenths = tenths;
      const view: JobView = {
        id: job.id,
        operation: job.operation,
        state: 'running',
        createdAt: new Date(job.createdAt).toISOString(),
        startedAt: new Date(job.startedAt).toISOString(),
        ...runningView(progress, job.startedAt, 0),
      };
      const options = { secret, allowPrivate, event, attempts: 1, deliveryId: `${job.id}.progress.${tenths * 10}`, logger: this.logger };
      const sending = (this.progressSent.get(job.id) ?? Promise.resolve()).then(() => deliverWebhook(url, { event, job: view }, options)).then(
        () => undefined,
        () => undefined,
      );
      this.progressSent.set(job.id, sending);
    };
  }

  /** Stops delivering; what is not delivered stays in the outbox for the next process. */
  async close(): Promise<void> {
    await this.outbox.close();
  }
}
