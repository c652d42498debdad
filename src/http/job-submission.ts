import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { JobAccepted } from '../api/jobs.js';
import { specCharacters, type JobAnswers, type QueuedOperation, type SpecOf } from '../jobs/spec.js';
import { jobClient } from './job-client.js';

/** Asked for with the body's `async`, or RFC 7240's `Prefer: respond-async`. */
function wantsAsync(request: FastifyRequest, bodyAsync: boolean | undefined): boolean {
  if (bodyAsync !== undefined) return bodyAsync;
  const prefer = request.headers.prefer;
  return (Array.isArray(prefer) ? prefer.join(',') : (prefer ?? '')).split(/[,;]/).some((token) => token.trim().toLowerCase() === 'respond-async');
}

export interface AnswerOptions {
  async?: boolean;
  webhook_url?: string;
  webhook_progress?: boolean;
}

/**
 * How /tts and /tts-video answer: the job use case (app.jobRequests) checks, answers from the cache or queues; here
 * the request's way of asking (`async`, `Prefer`) and the answer's HTTP form (200 with the body, or 202 with where
 * to follow the job).
 */
export async function answerJob<O extends QueuedOperation>(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  spec: SpecOf<O>,
  answer: AnswerOptions,
): Promise<JobAnswers[O] | JobAccepted> {
  // A book's text is read first: its characters are what the request weighs.
  const ready = await app.jobRequests.withBookText(spec, jobClient(request, 0).id);
  const characters = specCharacters(ready);
  const outcome = await app.jobRequests.submit(ready, jobClient(request, characters), {
    detached: wantsAsync(request, answer.async),
    webhookUrl: answer.webhook_url,
    webhookProgress: answer.webhook_progress,
  });
  if (outcome.kind === 'accepted') {
    const statusUrl = `/jobs/${outcome.id}`;
    request.log.info({ operation: spec.operation, job: outcome.id, webhook: outcome.webhook }, 'job accepted');
    reply.code(202).header('location', statusUrl);
    return { status: 'accepted', id: outcome.id, statusUrl, state: outcome.state };
  }
  const facts = { operation: spec.operation, voice: outcome.voice, characters };
  if (outcome.cached) request.log.info(facts, 'answered from the cache');
  else request.log.info({ ...facts, file: outcome.file }, 'job done');
  return outcome.body;
}
