// A Piper host gives back what its runs used once they are over: on ONNX Runtime 1.32 its sessions run without
// ONNX Runtime's arena, and its allocator returns what they freed: jemalloc (the default where installed) within its
// decay, glibc's (two arenas) when the host trims them after a quiet spell (engines/onnx/idle-trim.ts). With the
// arena, a host stays at its peak (about 600 MB after a few sentences).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PiperEngine } from '../../src/engines/piper/engine.js';
import { DEFAULT_ONNXRUNTIME_LIBRARY } from '../../src/engines/onnx/runtime.js';

const VOICES = fileURLToPath(new URL('../../voices', import.meta.url));
const installed = existsSync(DEFAULT_ONNXRUNTIME_LIBRARY) && existsSync(`${VOICES}/en_US-joe-medium.onnx`);
const run = installed || Boolean(process.env.CI);
const SENTENCES = [
  'The library opens at nine, and the reading room fills up before ten.',
  'Students bring laptops, retired teachers bring crosswords, and a few people simply come to sit by the window.',
  'At noon the librarian rings a small brass bell to remind everyone that the cafe downstairs is open.',
  'Most afternoons are quiet, apart from the printer and the turning of pages.',
  'When it rains, the old roof sings, and nobody seems to mind at all.',
];
const MB = 1024;

async function statusMb(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) / MB;
}

describe.runIf(run).each([
  // jemalloc's pages decay over 5 s dirty, then 5 s muzzy (host-options.ts); the trim follows 250 ms of quiet.
  { allocator: 'auto', quietMs: 12_000 },
  { allocator: 'glibc', quietMs: 1000 },
] as const)('Piper host memory on ONNX Runtime 1.32, allocator $allocator', ({ allocator, quietMs }) => {
  let engine: PiperEngine;

  beforeAll(async () => {
    engine = await PiperEngine.create({ voicesDir: VOICES, poolSize: 2, warmVoice: 'auto', allocator });
  });
  afterAll(() => engine?.close());

  it('goes back well below its peak once the runs are over', async () => {
    for (let round = 0; round < 2; round++) await Promise.all(SENTENCES.map((sentence) => engine.synthesize('piper:en_US-joe-medium', sentence)));
    const pid = engine.pids()[0] as number;
    const peak = await statusMb(pid, 'VmHWM');
    await new Promise((resolve) => setTimeout(resolve, quietMs));
    const rest = await statusMb(pid, 'VmRSS');
    expect(peak - rest, `peak ${Math.round(peak)} MB, at rest ${Math.round(rest)} MB`).toBeGreaterThan(100);
  }, 60_000);
});
