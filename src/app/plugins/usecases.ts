import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { JobRequests } from '../../usecases/job-requests.js';
import { SpeechStreams } from '../../usecases/speech-streams.js';
import { VoiceCatalog } from '../../usecases/voices.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The voices every front door offers. */
    voices: VoiceCatalog;
    /** Streamed speech, for every front door that answers with audio as it is spoken. */
    speech: SpeechStreams;
    /** Queued speech and video: checked, answered from the cache or queued. */
    jobRequests: JobRequests;
  }
}

/** The use cases the front doors call: each made once, from the services. */
async function useCasesPlugin(app: FastifyInstance): Promise<void> {
  app.decorate('voices', new VoiceCatalog(app.engines));
  const { executor } = app;
  app.decorate('speech', new SpeechStreams({ synthesizer: app.synthesizer, lexicons: app.lexicons, slots: app.jobs, partition: (client) => executor.cachePartition(client) }));
  app.decorate('jobRequests', new JobRequests({ storage: app.storage, assets: app.assets, executor, results: app.results, queue: app.queue, config: app.config }));
}

export default fp(useCasesPlugin, { name: 'usecases', dependencies: ['work', 'services', 'queue'] });
