/**
 * A control for the server's event-loop delay: an idle Node process with the same monitor as prom-client's
 * (monitorEventLoopDelay, 10 ms resolution). What it sees is what the machine alone does to an event loop.
 * Each message gets the readings since the previous one.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

const histogram = monitorEventLoopDelay({ resolution: 10 });
histogram.enable();
process.on('message', () => {
  process.send?.({ p99Ms: histogram.percentile(99) / 1e6, maxMs: histogram.max / 1e6 });
  histogram.reset();
});
process.on('disconnect', () => process.exit(0));
