import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkWebhookUrl } from '../jobs/webhooks.js';
import type { JobAccepted } from '../api/jobs.js';
import { outcomeOf, type JobAnswers, type QueuedOperation, type SpecOf } from '../jobs/spec.js';
import { jobClient } from './job-client.js';
import { cachedCost } from '../jobs/pricing.js';
import { storageDown, storageUnavailable } from '../storage/storage.js';

/** Asked for with the body's `async`, or RFC 7240's `Prefer: respond-async`. */
function wantsAsync(request: FastifyRequest, bodyAsync: boolean | undefined): boolean {
  if (bodyAsync !== undefined) return bodyAsync;
  const prefer = request.headers.prefer;
  return (Array.isArray(prefer) ? prefer.join(',') : (prefer ?? '')).split(/[,;]/).some((token) => token.trim().toLowerCase() === 'respond-async');
}

export interface AnswerOptions {
  async?: boolean;
  webhook_url?: string;
}

/**
 * How /tts and /tts-video answer, in one place: the request is checked before anything is queued; an identical
 * earlier request whose file still exists is answered at once from the cache (asynchronously too: a job made done,
 * its webhook called); otherwise the job is queued and either awaited (the seed's synchronous contract) or
 * answered 202 with where to follow it.
 */
export async function answerJob<O extends QueuedOperation>(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  spec: SpecOf<O>,
  answer: AnswerOptions,
): Promise<JobAnswers[O] | JobAccepted> {
  // Storage out of reach (an upload found it so, and it still does not answer): no work is taken that could not be published.
  if (await storageDown(app.storage)) throw storageUnavailable();
  const client = jobClient(request, spec.request.text.length);
  const voice = await app.executor.check(spec, client.id);
  const webhookUrl = answer.webhook_url === undefined ? undefined : checkWebhookUrl(answer.webhook_url, app.config.webhooks).href;
  const cacheKey = app.results.keyOf(spec, voice, client.id);
  const found = await app.results.lookup(spec.operation, cacheKey);
  // The earlier answer, as this request would have had it: its own spelling of the voice, the price of a hit.
  const cached = found && {
    files: found.files,
    body: answered(found.body, { voice: spec.request.voice, cost: cachedCost(found.body.cost, app.config.cache.hitPriceFactor), cached: true }),
  };
  // A webhook is only for a job that outlives its request.
  const detached = webhookUrl !== undefined || wantsAsync(request, answer.async);
  if (cached && !detached) {
    request.log.info({ operation: spec.operation, voice: voice.id, characters: spec.request.text.length }, 'answered from the cache');
    return cached.body;
  }
  const job = await app.queue.submit(spec, { client, detached, webhookUrl, cacheKey, cached });
  if (detached) {
    const statusUrl = `/jobs/${job.id}`;
    request.log.info({ operation: spec.operation, job: job.id, webhook: Boolean(webhookUrl) }, 'job accepted');
    reply.code(202).header('location', statusUrl);
    return { status: 'accepted', id: job.id, statusUrl, state: cached ? 'succeeded' : 'queued' };
  }
  const outcome = outcomeOf(spec.operation, await job.outcome());
  request.log.info({ operation: spec.operation, voice: voice.id, characters: spec.request.text.length, file: outcome.files[0] }, 'job done');
  return answered(outcome.body, { cached: false });
}

/** An answer with some of its fields restated (a body stays its operation's body). */
function answered<B extends JobAnswers[QueuedOperation]>(body: B, changes: Partial<Pick<B, 'voice' | 'cost' | 'cached'>>): B {
  return { ...body, ...changes };
}
