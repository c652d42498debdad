import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../../errors.js';
import type { JobView } from '../../jobs/queue.js';
import { clientId } from '../job-client.js';
import { ErrorBody } from '../../api/errors.js';
import { JobParams, JobStatus } from '../../api/jobs.js';

/** A job is shown only to the client that submitted it (same API key, or same address when the service is open). */
function found(view: JobView | undefined): JobView {
  if (!view) throw new AppError('JOB_NOT_FOUND');
  return view;
}

const jobsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/jobs/:id',
    {
      schema: {
        tags: ['jobs'],
        summary: "An asynchronous job's state: queued (position, ETA), running (progress), succeeded (the result), failed or cancelled",
        params: JobParams,
        response: { 200: JobStatus, '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request, reply) => {
      const view = found(await app.queue.get(request.params.id, clientId(request)));
      // Presigned URLs made when the job finished may be about to expire: the result's are made now.
      if (view.result) view.result = await app.results.freshUrls(view.result);
      // Pollers are told when to come back: soon while it runs, never once it is done.
      if (view.state === 'queued' || view.state === 'running') reply.header('retry-after', String(Math.min(5, Math.max(1, view.etaSeconds ?? 1))));
      reply.header('cache-control', 'no-store');
      return view;
    },
  );

  app.delete(
    '/jobs/:id',
    {
      schema: {
        tags: ['jobs'],
        summary: 'Cancels a queued or running job (its files are not published); a finished job is left as it is',
        params: JobParams,
        response: { 200: JobStatus, '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request) => found(await app.queue.cancel(request.params.id, clientId(request))),
  );
};

export default jobsRoutes;
