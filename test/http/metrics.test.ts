import { fixture } from '../helpers/fixtures.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FliteEngine } from '../../src/engines/flite/engine.js';
import { Metrics } from '../../src/jobs/metrics.js';
import { Limiter } from '../../src/jobs/admission/limiter.js';
import { Synthesizer } from '../../src/speech/synthesizer.js';
import { LocalStorage } from '../../src/storage/local.js';
import { ScratchSpace } from '../../src/storage/scratch.js';
import { ffmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';

const root = useTempDir('voxreel-metrics-');

describe('metrics labels', () => {
  const metrics = new Metrics(() => new Limiter({ concurrency: 1, queueLength: 0 }).stats);
  let engine: FliteEngine;
  let scratch: ScratchSpace;
  let synthesizer: Synthesizer;
  beforeAll(async () => {
    // A Flite host that crashes on purpose: the one part that cannot be made to fail for real on demand.
    engine = await FliteEngine.create({ poolSize: 1, hostModule: fixture('faulty-flite-host.ts') });
    const storage = new LocalStorage(`${root}/out`, 'http://files.example');
    await storage.init();
    scratch = await ScratchSpace.open(`${root}/scratch`);
    synthesizer = new Synthesizer(engine, ffmpeg, storage, scratch, { audioSeconds: 600, videoSeconds: 300 }, metrics);
  });
  afterAll(async () => {
    synthesizer.close();
    await Promise.all([engine.close(), scratch.close()]);
  });

  it('count engine failures by the engine the voice resolved to, however the id was spelled', async () => {
    for (const spelling of ['FLITE:slt', 'fLiTe:SLT']) {
      const voice = synthesizer.resolveVoice({ text: 'FAULT:segfault', voice: spelling });
      await expect(synthesizer.renderAudio({ text: 'FAULT:segfault', voice, encoding: 'mp3', speed: 1 })).rejects.toMatchObject({ code: 'ENGINE_FAILED' });
    }
    const series = (await metrics.registry.metrics()).split('\n').filter((line) => line.startsWith('voxreel_engine_failures_total{'));
    expect(series).toEqual(['voxreel_engine_failures_total{engine="flite"} 2']);
  });
});
