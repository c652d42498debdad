import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { EngineName } from '../engines/types.js';
import type { ErrorCode } from '../errors.js';
import type { Operation } from './lifecycle.js';
import type { JobObserver } from './admission/slots.js';
import type { SpeechObserver } from '../speech/synthesizer.js';

/** Jobs of the shared queue (Redis) by state, as an operator scales workers on them. */
export interface QueueCounts {
  /** Waiting for a worker (BullMQ's waiting and prioritized jobs). */
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
}

/** The shared queue as the API processes see it: read at each scrape. */
export interface SharedQueueSource {
  counts(): Promise<QueueCounts>;
  /** Workers that have reported within their heartbeat. */
  workers(): Promise<number>;
}

/** This process's own work: jobs running and waiting for a slot here. */
export interface LocalWork {
  readonly running: number;
  readonly queued: number;
}

/**
 * Prometheus metrics; one registry per app so that several apps in one process (tests) do not collide. Every label
 * value comes from what the server resolved (a route pattern, an engine, an error code), never from a raw request field.
 */
export class Metrics implements JobObserver, SpeechObserver {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'voxreel_http_requests_total',
    help: 'HTTP requests by route, method and status code.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: 'voxreel_http_request_duration_seconds',
    help: 'HTTP request latency by route and method.',
    labelNames: ['route', 'method'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });
  readonly jobDuration = new Histogram({
    name: 'voxreel_job_duration_seconds',
    help: 'Synthesis and render job durations by operation and outcome.',
    labelNames: ['operation', 'outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300],
    registers: [this.registry],
  });
  readonly engineFailures = new Counter({
    name: 'voxreel_engine_failures_total',
    help: 'Speech engine failures (crash, garbage, timeout) by engine.',
    labelNames: ['engine'] as const,
    registers: [this.registry],
  });
  readonly sentenceCacheRequests = new Counter({
    name: 'voxreel_sentence_cache_requests_total',
    help: 'Sentences looked up in the sentence cache: hit (the engine was not called) or miss.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly requestCacheRequests = new Counter({
    name: 'voxreel_cache_requests_total',
    help: 'Requests looked up in the request cache by operation: hit (the earlier file returned) or miss.',
    labelNames: ['operation', 'result'] as const,
    registers: [this.registry],
  });
  readonly streamsCut = new Counter({
    name: 'voxreel_streams_cut_total',
    help: 'Streamed responses that failed after their first byte (the client sees a cut-off body), by error code.',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  /**
   * `work`: this process's jobs (the API's limiter, a worker's running jobs); `sentenceCache`: the cache whose size
   * the gauge voxreel_sentence_cache_bytes reports (0 without one).
   */
  constructor(work: () => LocalWork, sources: { sentenceCache?: { readonly bytes: number } } = {}) {
    collectDefaultMetrics({ register: this.registry, prefix: 'voxreel_' });
    new Gauge({
      name: 'voxreel_sentence_cache_bytes',
      help: 'Estimated memory held by the sentence cache of this process.',
      registers: [this.registry],
      collect() {
        this.set(sources.sentenceCache?.bytes ?? 0);
      },
    });
    new Gauge({
      name: 'voxreel_queue_depth',
      help: 'Jobs waiting for a slot in this process (the shared queue: voxreel_queue_jobs).',
      registers: [this.registry],
      collect() {
        this.set(work().queued);
      },
    });
    new Gauge({
      name: 'voxreel_jobs_running',
      help: 'Jobs running now in this process.',
      registers: [this.registry],
      collect() {
        this.set(work().running);
      },
    });
  }

  /**
   * Adds the shared queue's gauges, read from Redis at each scrape: `voxreel_queue_jobs{state}` (what a worker
   * autoscaler watches) and `voxreel_workers`. A Redis that does not answer leaves them unreported, never a hung scrape.
   */
  watchSharedQueue(source: SharedQueueSource): void {
    new Gauge({
      name: 'voxreel_queue_jobs',
      help: 'Jobs of the shared (Redis) queue by state: waiting for a worker, active, delayed (a retry), failed.',
      labelNames: ['state'] as const,
      registers: [this.registry],
      async collect() {
        const counts = await source.counts().catch(() => undefined);
        if (!counts) return;
        for (const [state, count] of Object.entries(counts)) this.set({ state }, count);
      },
    });
    new Gauge({
      name: 'voxreel_workers',
      help: 'voxreel workers that reported within their heartbeat (15 s).',
      registers: [this.registry],
      async collect() {
        const workers = await source.workers().catch(() => undefined);
        if (workers !== undefined) this.set(workers);
      },
    });
  }

  jobFinished(operation: Operation, seconds: number, outcome: string): void {
    this.jobDuration.observe({ operation, outcome }, seconds);
  }

  engineFailed(engine: EngineName): void {
    this.engineFailures.inc({ engine });
  }

  sentenceCache(hit: boolean): void {
    this.sentenceCacheRequests.inc({ result: hit ? 'hit' : 'miss' });
  }

  requestCache(operation: Operation, hit: boolean): void {
    this.requestCacheRequests.inc({ operation, result: hit ? 'hit' : 'miss' });
  }

  streamCut(code: ErrorCode): void {
    this.streamsCut.inc({ code });
  }
}

