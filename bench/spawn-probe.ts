/**
 * How long child_process.spawn() holds the event loop of a Node process of a given size (fork() copies its page
 * tables): `node --import tsx bench/spawn-probe.ts <MB of ballast>`, answers over IPC with the p50 of 10 spawns.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { resolveMediaTools } from '../src/media/tools.js';
import { median } from './stats.js';

const ballast = Array.from({ length: Number(process.argv[2]) }, () => Buffer.alloc(1 << 20, 1));
const ffmpeg = resolveMediaTools().ffmpeg;
const times: number[] = [];
for (let run = 0; run < 10; run += 1) {
  const started = performance.now();
  const child = spawn(ffmpeg, ['-version'], { stdio: 'ignore' });
  times.push(performance.now() - started);
  await once(child, 'close');
}
process.send?.({ rssMb: Math.round(process.memoryUsage().rss / 2 ** 20), spawnMs: median(times), ballastMb: ballast.length });
process.disconnect?.();
