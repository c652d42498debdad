import { performance } from 'node:perf_hooks';
import { postJson, scrapeMetrics, type Service } from './service.js';
import { percentile, round } from './stats.js';
import { textOf } from './texts.js';

export interface ThroughputRow {
  concurrency: number;
  /** From the first request to the last answer (requests in flight at the deadline are waited for and counted). */
  seconds: number;
  requests: number;
  errors: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** prom-client's monitorEventLoopDelay (10 ms resolution, so 10 ms is its floor), reset by the scrape before the level. */
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
}

/** Above this many requests a level stops early, so it stays bounded even on a very fast machine. */
const MAX_REQUESTS_PER_LEVEL = 5000;
const LAG = 'voxreel_nodejs_eventloop_lag';

/**
 * Closed loop: `concurrency` clients each POST /tts (200 characters, mp3) again as soon as their answer is read,
 * until `seconds` have passed. Non-200 answers and failed requests count as errors, not in the latencies.
 */
export async function measureThroughput(service: Service, voice: string, levels: readonly number[], seconds: number): Promise<ThroughputRow[]> {
  const body = { text: textOf(200), voice, format: 'mp3' };
  const rows: ThroughputRow[] = [];
  for (const concurrency of levels) {
    // The scrape resets the server's event-loop delay histogram: the next one covers exactly this level.
    await scrapeMetrics(service.baseUrl);
    const latencies: number[] = [];
    let errors = 0;
    let sent = 0;
    const started = performance.now();
    const deadline = started + seconds * 1000;
    const client = async () => {
      while (performance.now() < deadline && sent < MAX_REQUESTS_PER_LEVEL) {
        sent += 1;
        try {
          const answer = await postJson(`${service.baseUrl}/tts`, body);
          if (answer.status === 200) latencies.push(answer.ms);
          else errors += 1;
        } catch {
          errors += 1;
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, client));
    const elapsed = (performance.now() - started) / 1000;
    const metrics = await scrapeMetrics(service.baseUrl);
    const row: ThroughputRow = {
      concurrency,
      seconds: round(elapsed, 2),
      requests: latencies.length,
      errors,
      requestsPerSecond: round(latencies.length / elapsed, 2),
      p50Ms: round(percentile(latencies, 50), 1),
      p99Ms: round(percentile(latencies, 99), 1),
      eventLoopP99Ms: round((metrics.get(`${LAG}_p99_seconds`) ?? Number.NaN) * 1000, 1),
      eventLoopMaxMs: round((metrics.get(`${LAG}_max_seconds`) ?? Number.NaN) * 1000, 1),
    };
    rows.push(row);
    console.log(`  concurrency ${concurrency}: ${row.requestsPerSecond} req/s, p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms, ${errors} errors, event loop p99 ${row.eventLoopP99Ms} ms`);
  }
  return rows;
}
