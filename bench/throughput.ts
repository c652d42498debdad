import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { postJson, scrapeMetrics, type Service } from './service.js';
import { inRounds, percentile, round } from './stats.js';
import { textOf } from './texts.js';

export interface ThroughputRow {
  concurrency: number;
  /** Sum of the level's slices, each from its first request to its last answer (requests in flight at the deadline are waited for and counted). */
  seconds: number;
  requests: number;
  errors: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** prom-client's monitorEventLoopDelay (10 ms resolution, so 10 ms is its floor), p99 of the worst slice. */
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
  /** The same monitor in an idle Node process beside the server (bench/loop-probe.ts): the machine's share of the delay. */
  idleControlP99Ms: number;
  /** CPU time of the server process (all its threads, not its children) per wall second, in % of one core. */
  serverCpuPercent: number;
  /** Busy share of all the machine's cores (/proc/stat), whoever used them, in %. */
  machineBusyPercent: number;
}

/** Above this many requests a slice stops early, so it stays bounded even on a very fast machine. */
const MAX_REQUESTS_PER_SLICE = 2000;
/** USER_HZ, the unit of /proc CPU times: 100 on every Linux architecture Node runs on. */
const TICKS_PER_SECOND = 100;
const LAG = 'voxreel_nodejs_eventloop_lag';

interface Slice {
  seconds: number;
  latencies: number[];
  errors: number;
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
  idleControlP99Ms: number;
  serverCpuSeconds: number;
  machine: { busy: number; total: number };
}

/**
 * Closed loop: `concurrency` clients each POST /tts (200 characters, mp3) again as soon as their answer is read.
 * Each level gets `seconds` in all, cut into `rounds` slices taken round-robin with the other levels, so that a
 * change in the machine's other load falls on every level. Non-200 answers and failed requests count as errors.
 */
export async function measureThroughput(
  service: Service,
  voice: string,
  plan: { levels: readonly number[]; seconds: number; rounds: number },
): Promise<ThroughputRow[]> {
  const body = { text: textOf(200), voice, format: 'mp3' };
  const slices = new Map<number, Slice[]>(plan.levels.map((level) => [level, []]));
  const control = await LoopProbe.start();
  try {
    await inRounds(
      plan.levels,
      () => plan.rounds,
      async (concurrency) => {
        slices.get(concurrency)?.push(await slice(service, control, body, concurrency, (plan.seconds * 1000) / plan.rounds));
      },
    );
  } finally {
    control.stop();
  }
  return plan.levels.map((concurrency) => {
    const parts = slices.get(concurrency) ?? [];
    const sum = (value: (part: Slice) => number) => parts.reduce((total, part) => total + value(part), 0);
    const latencies = parts.flatMap((part) => part.latencies);
    const seconds = sum((part) => part.seconds);
    const row: ThroughputRow = {
      concurrency,
      seconds: round(seconds, 2),
      requests: latencies.length,
      errors: sum((part) => part.errors),
      requestsPerSecond: round(latencies.length / seconds, 2),
      p50Ms: round(percentile(latencies, 50), 1),
      p99Ms: round(percentile(latencies, 99), 1),
      eventLoopP99Ms: Math.max(...parts.map((part) => part.eventLoopP99Ms)),
      eventLoopMaxMs: Math.max(...parts.map((part) => part.eventLoopMaxMs)),
      idleControlP99Ms: Math.max(...parts.map((part) => part.idleControlP99Ms)),
      serverCpuPercent: round((100 * sum((part) => part.serverCpuSeconds)) / seconds, 0),
      machineBusyPercent: round((100 * sum((part) => part.machine.busy)) / sum((part) => part.machine.total), 0),
    };
    console.log(
      `  concurrency ${concurrency}: ${row.requestsPerSecond} req/s, p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms, ${row.errors} errors, ` +
        `event loop p99 ${row.eventLoopP99Ms} ms (idle control ${row.idleControlP99Ms} ms), server CPU ${row.serverCpuPercent}%, machine busy ${row.machineBusyPercent}%`,
    );
    return row;
  });
}

async function slice(service: Service, control: LoopProbe, body: unknown, concurrency: number, durationMs: number): Promise<Slice> {
  // The scrape resets the server's event-loop delay histogram: the next one covers exactly this slice. Likewise the control's.
  await scrapeMetrics(service.baseUrl);
  await control.read();
  const [cpuBefore, machineBefore] = [await serverCpuSeconds(service.pid), await machineTicks()];
  const latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  const client = async () => {
    while (performance.now() < deadline && sent < MAX_REQUESTS_PER_SLICE) {
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
  const seconds = (performance.now() - started) / 1000;
  const [cpuAfter, machineAfter] = [await serverCpuSeconds(service.pid), await machineTicks()];
  const metrics = await scrapeMetrics(service.baseUrl);
  const idle = await control.read();
  return {
    seconds,
    latencies,
    errors,
    eventLoopP99Ms: round((metrics.get(`${LAG}_p99_seconds`) ?? Number.NaN) * 1000, 1),
    eventLoopMaxMs: round((metrics.get(`${LAG}_max_seconds`) ?? Number.NaN) * 1000, 1),
    idleControlP99Ms: round(idle.p99Ms, 1),
    serverCpuSeconds: cpuAfter - cpuBefore,
    machine: { busy: machineAfter.busy - machineBefore.busy, total: machineAfter.total - machineBefore.total },
  };
}

/** utime + stime of the process, in seconds. */
async function serverCpuSeconds(pid: number): Promise<number> {
  const times = await cpuSeconds(pid);
  if (!times) throw new Error(`process ${pid} is gone`);
  return times.own;
}

/**
 * CPU time of a process in seconds: its own (utime + stime), and that of its children that have exited and been
 * waited for (cutime + cstime); undefined once it is gone.
 */
export async function cpuSeconds(pid: number): Promise<{ own: number; reaped: number } | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (!stat) return undefined;
  // Fields after "(comm)": state is the 3rd field of the line, utime the 14th, stime the 15th, cutime and cstime the next two.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
  const ticks = (index: number) => fields[index] ?? Number.NaN;
  return { own: (ticks(11) + ticks(12)) / TICKS_PER_SECOND, reaped: (ticks(13) + ticks(14)) / TICKS_PER_SECOND };
}

/** All cores' ticks since boot: busy (everything but idle and iowait) and total. */
export async function machineTicks(): Promise<{ busy: number; total: number }> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.slice(0, 8).reduce((sum, value) => sum + value, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: total - idle, total };
}

/** bench/loop-probe.ts in a child process. */
class LoopProbe {
  private constructor(private readonly child: ChildProcess) {}

  static async start(): Promise<LoopProbe> {
    const child = fork(new URL('./loop-probe.ts', import.meta.url), { stdio: 'ignore' });
    await once(child, 'spawn');
    return new LoopProbe(child);
  }

  /** The delays since the previous read. */
  async read(): Promise<{ p99Ms: number; maxMs: number }> {
    const answer = once(this.child, 'message', { signal: AbortSignal.timeout(10_000) });
    this.child.send('read');
    return (await answer)[0] as { p99Ms: number; maxMs: number };
  }

  stop(): void {
    this.child.disconnect();
  }
}

export interface SpawnCost {
  /** Resident size of the spawning process. */
  rssMb: number;
  /** p50 time spawn() returns after, during which the event loop can do nothing else. */
  spawnMs: number;
}

/** bench/spawn-probe.ts at a few process sizes: what each ffmpeg or ffprobe start costs the server's event loop. */
export async function measureSpawnCost(ballastMb: readonly number[]): Promise<SpawnCost[]> {
  const costs: SpawnCost[] = [];
  for (const megabytes of ballastMb) {
    const child = fork(new URL('./spawn-probe.ts', import.meta.url), [String(megabytes)], { stdio: 'ignore' });
    const [answer] = (await once(child, 'message', { signal: AbortSignal.timeout(60_000) })) as [SpawnCost];
    costs.push({ rssMb: answer.rssMb, spawnMs: round(answer.spawnMs, 1) });
  }
  console.log(`  spawn() holds the event loop: ${costs.map((cost) => `${cost.spawnMs} ms at ${cost.rssMb} MB`).join(', ')}`);
  return costs;
}
