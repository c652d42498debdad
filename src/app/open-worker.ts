import type { Config } from '../config.js';
import { SentenceCache } from '../speech/sentence-cache.js';
import { Limiter } from '../jobs/admission/limiter.js';
import { jobPipeline } from './job-pipeline.js';
import { answersPing, closeRedis, connectStateRedis, untilReachable } from '../jobs/redis/connection.js';
import { RedisJobWorker, type WorkerLog } from '../jobs/redis/worker.js';
import { openServices, type ServiceDeps } from './services.js';
import { Metrics } from '../jobs/metrics.js';
import { startWorkerServer } from '../jobs/worker-server.js';
import { DeliveryAttempts } from '../jobs/webhooks/outbox.js';
import { RedisOutbox } from '../jobs/webhooks/redis-outbox.js';

export interface RunningWorker {
  voices: number;
  /** The port of its /healthz, /readyz and /metrics, when WORKER_PORT is not 0. */
  port?: number;
  /** Stops taking jobs; running ones get `graceMs`, then go back to the queue. Then everything is closed. */
  close(graceMs: number): Promise<void>;
}

/** Everything a `voxreel worker` runs, for its entry point and for tests: the services, the pipeline, the queue's consumer. */
export async function openWorker(config: Config & { redisUrl: string }, log: WorkerLog, deps: ServiceDeps = {}): Promise<RunningWorker> {
  // A worker takes no uploads, so nothing waits at this gate; the folders belong to the API processes.
  const gate = new Limiter({ concurrency: config.concurrency, queueLength: 0 });
  const sentenceCache = new SentenceCache(config.cache.sentenceBytes);
  const running: { worker?: RedisJobWorker } = {};
  const metrics = new Metrics(() => ({ running: running.worker?.running ?? 0, queued: 0 }), { sentenceCache });
  const services = await openServices(config, deps, { gate, sentenceCache, ownsFolders: false, log, observer: metrics });
  // Jobs are taken once the start-up voice is warm: the first one is then as fast as the next.
  await services.warmUp.done;
  const splicer = await services.splicer.run();
  if (!splicer.ok) log.warn({ err: splicer.cause, reason: splicer.reason }, 'the H.264 splicer failed its self-check: videos are rendered the plain way');
  const redis = await connectStateRedis(config.redisUrl, log);
  await untilReachable(redis, config.redisUrl);
  const outbox = await RedisOutbox.open(config, { attempts: new DeliveryAttempts(config.webhooks, log), logger: log, deliver: true });
  const pipeline = jobPipeline(config, services, redis, metrics, outbox, log);
  const worker = await RedisJobWorker.start({ config, pipeline, redis, log, observer: metrics, storage: services.storage });
  running.worker = worker;
  let closing = false;
  const ready = async () => !closing && (await answersPing(redis));
  const server = config.workerPort > 0 ? await startWorkerServer(config.host, config.workerPort, { ready, registry: metrics.registry }) : undefined;
  return {
    voices: services.engines.listVoices().length,
    port: server?.port,
    close: async (graceMs) => {
      closing = true;
      await worker.close(graceMs);
      await server?.close();
      await pipeline.followUp.close();
      await services.close();
      await closeRedis(redis);
    },
  };
}
