// Issue 22: one client's flood pushes out its own kept jobs, never another's, and webhook attempts take turns.
import { describe, expect, it } from 'vitest';
import type { JobExecutor } from '../../src/jobs/executor.js';
import { AppError } from '../../src/errors.js';
import { FairGate } from '../../src/jobs/admission/fair-gate.js';
import { Limiter } from '../../src/jobs/admission/limiter.js';
import { LocalJobQueue } from '../../src/jobs/local-queue.js';
import { JobSlots } from '../../src/jobs/admission/slots.js';
import type { JobOutcome, JobSpec } from '../../src/jobs/spec.js';

const SPEC: JobSpec = { operation: 'tts', request: { text: 'Hello.', voice: 'espeak-ng:en-us' } };
/** A cached answer: the job is done as soon as it is made, as a flood of repeated async requests is. */
const CACHED: JobOutcome = { body: { status: 'success', url: 'http://localhost/files/audio/x.mp3', duration: 1, cost: 0 } as JobOutcome['body'], files: [] };

describe('the embedded job store', () => {
  it("forgets the flooding client's oldest finished jobs, never another client's", async () => {
    const slots = new JobSlots(new Limiter({ concurrency: 1, queueLength: 10 }), { ttsTimeoutMs: 10_000, videoTimeoutMs: 10_000 });
    // Cached jobs never reach the executor: there is nothing for it to do.
    const queue = new LocalJobQueue(slots, undefined as unknown as JobExecutor, { retentionMs: 60_000, maxKeptJobs: 5 });
    const submit = async (client: string) => {
      const job = await queue.submit(SPEC, { client: { id: client, signal: new AbortController().signal, characters: 6 }, detached: true, cached: CACHED });
      await job.outcome();
      return job.id;
    };
    const theirs = await submit('ip:10.0.0.2');
    const flood: string[] = [];
    for (let index = 0; index < 50; index += 1) flood.push(await submit('ip:10.0.0.1'));

    expect(await queue.get(theirs, 'ip:10.0.0.2')).toMatchObject({ id: theirs, state: 'succeeded' });
    // The flood keeps its newest four of the five places.
    const kept = await Promise.all(flood.map((id) => queue.get(id, 'ip:10.0.0.1')));
    expect(kept.filter(Boolean)).toHaveLength(4);
    expect(kept.slice(-4).every(Boolean)).toBe(true);
    await queue.close();
  });
});

describe('FairGate', () => {
  /** A task that runs until `release` is called. */
  function held() {
    let release = () => undefined as void;
    const done = new Promise<void>((resolve) => (release = resolve));
    return { task: () => done, release };
  }

  it('runs at most the total and the per-key share at once; the keys take turns for what waits', async () => {
    const gate = new FairGate(3, 2);
    const started: string[] = [];
    const tasks = new Map<string, ReturnType<typeof held>>();
    const run = (key: string, name: string) => {
      const task = held();
      tasks.set(name, task);
      return gate.run(key, () => {
        started.push(name);
        return task.task();
      });
    };
    const all = ['a1', 'a2', 'a3', 'a4', 'a5'].map((name) => run('a', name));
    all.push(run('b', 'b1'), run('b', 'b2'));
    await Promise.resolve();
    // Key a has its two; key b's first takes the third place.
    expect(started).toEqual(['a1', 'a2', 'b1']);
    expect(gate.stats).toEqual({ running: 3, waiting: 4 });

    tasks.get('b1')?.release();
    await new Promise((resolve) => setImmediate(resolve));
    // a is at its share: b goes on.
    expect(started).toEqual(['a1', 'a2', 'b1', 'b2']);
    tasks.get('a1')?.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started.at(-1)).toBe('a3');
    for (const name of ['a2', 'b2', 'a3', 'a4', 'a5']) {
      tasks.get(name)?.release();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(all);
    expect(started).toHaveLength(7);
    expect(gate.stats).toEqual({ running: 0, waiting: 0 });
  });
});

describe('an asynchronous job that fails in the embedded queue', () => {
  it('is logged (its request is gone, so nothing else would say so)', async () => {
    const warnings: string[] = [];
    const slots = new JobSlots(new Limiter({ concurrency: 1, queueLength: 10 }), { ttsTimeoutMs: 10_000, videoTimeoutMs: 10_000 });
    const failing = { execute: () => Promise.reject(new AppError('OUTPUT_TOO_LONG')) } as unknown as JobExecutor;
    const queue = new LocalJobQueue(slots, failing, { retentionMs: 60_000, onWarning: (message) => warnings.push(message) });
    const client = { id: 'ip:10.0.0.3', signal: new AbortController().signal, characters: 6 };
    const job = await queue.submit(SPEC, { client, detached: true });
    await job.outcome().catch(() => undefined);
    expect(warnings).toEqual([`async job ${job.id} failed: OUTPUT_TOO_LONG`]);
    // A synchronous one is its request's to report.
    await (await queue.submit(SPEC, { client, detached: false })).outcome().catch(() => undefined);
    expect(warnings).toHaveLength(1);
    await queue.close();
  });
});
