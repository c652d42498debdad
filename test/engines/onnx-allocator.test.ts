// The C allocator of Piper's (and Kokoro's) processes: jemalloc where it is installed (ENGINE_ALLOCATOR), glibc's
// otherwise; the audio is the same either way.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { hostEnvironment, jemallocLibrary, onnxHostEnv } from '../../src/engines/onnx/host-options.js';
import { PiperEngine } from '../../src/engines/piper/engine.js';
import { descendantsOf } from '../helpers/process-table.js';

const VOICES = fileURLToPath(new URL('../../voices', import.meta.url));
const installed = existsSync(`${VOICES}/en_US-joe-medium.onnx`) && jemallocLibrary() !== undefined;
// script/setup installs both (libjemalloc2 by apt); CI must have them.
const run = installed || Boolean(process.env.CI);

/** The libraries a process has mapped. */
function mappedLibraries(pid: number): string {
  return readFileSync(`/proc/${pid}/maps`, 'utf8');
}

describe('the allocator of the neural engines\' processes', () => {
  it('preloads jemalloc, keeping a preload already there, and falls back to glibc\'s (two arenas) where it is missing or not wanted', () => {
    const library = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';
    const before = process.env.LD_PRELOAD;
    process.env.LD_PRELOAD = '/opt/other.so';
    try {
      expect(onnxHostEnv('auto', library)).toMatchObject({ allocator: 'jemalloc', env: { LD_PRELOAD: `${library}:/opt/other.so`, MALLOC_CONF: expect.stringContaining('background_thread:true') } });
    } finally {
      if (before === undefined) delete process.env.LD_PRELOAD;
      else process.env.LD_PRELOAD = before;
    }
    expect(onnxHostEnv('glibc', library)).toEqual({ allocator: 'glibc', env: expect.objectContaining({ MALLOC_ARENA_MAX: '2' }) });
    expect(onnxHostEnv('auto', undefined).allocator).toBe('glibc');
    expect(onnxHostEnv('glibc', library).env.LD_PRELOAD).toBeUndefined();
    // Asked for by name and missing: said, and glibc's used.
    const warnings: string[] = [];
    const env = hostEnvironment({ allocator: 'jemalloc', log: { warn: (_obj, message) => warnings.push(message) } }, () => undefined);
    expect(env.LD_PRELOAD).toBeUndefined();
    expect(warnings).toEqual([expect.stringContaining('apt install libjemalloc2')]);
    expect(hostEnvironment({ allocator: 'auto', log: { warn: (_obj, message) => warnings.push(message) } }, () => undefined)).toMatchObject({ MALLOC_ARENA_MAX: '2' });
    expect(warnings).toHaveLength(1);
  });

  it.runIf(run)('runs Piper\'s process on jemalloc by default and on glibc\'s when asked, and it says the same either way', async () => {
    const spoken: Int16Array[] = [];
    for (const allocator of ['auto', 'glibc'] as const) {
      const engine = await PiperEngine.create({ voicesDir: VOICES, poolSize: 1, allocator });
      try {
        spoken.push((await engine.synthesize('piper:en_US-joe-medium', 'The quick brown fox jumps over the lazy dog.')).samples);
        const hosts = descendantsOf(process.pid).filter((entry) => entry.args.includes('piper-host'));
        expect(hosts).toHaveLength(1);
        const maps = mappedLibraries((hosts[0] as { pid: number }).pid);
        expect(maps.includes('libjemalloc'), allocator).toBe(allocator === 'auto');
      } finally {
        await engine.close();
      }
    }
    expect(spoken[0]?.length).toBeGreaterThan(10_000);
    expect(spoken[0]).toEqual(spoken[1]);
  }, 120_000);
});
