import { afterAll, describe, expect, it } from 'vitest';
import { EspeakEngine } from '../../src/engines/espeak/engine.js';
import { recordedDescription } from '../../src/engines/espeak/voices-recorded.js';

describe("eSpeak NG's recorded voice list", () => {
  let engine: EspeakEngine | undefined;
  afterAll(async () => engine?.close());

  it('is what the installed release says (after an update: node --import tsx script/record-espeak-voices.ts)', async () => {
    const recorded = recordedDescription();
    expect(recorded, 'recorded for another release of @echogarden/espeak-ng-emscripten').toBeDefined();
    expect(recorded).toEqual(await EspeakEngine.describe({ startTimeoutMs: 60_000 }));
  }, 90_000);

  it('lists the voices at start-up without starting a process, which the first request starts', async () => {
    engine = await EspeakEngine.create({ poolSize: 1, startTimeoutMs: 60_000 });
    expect(engine.pids()).toEqual([]);
    const voices = await engine.listVoices();
    expect(voices.length).toBeGreaterThan(100);
    expect(voices.find((voice) => voice.id === 'espeak-ng:en-us')).toMatchObject({ language: 'en-US', sampleRate: 22050 });
    const speech = await engine.synthesize('espeak-ng:en-us', 'Hello there.');
    expect(speech.samples.length / speech.sampleRate).toBeGreaterThan(0.3);
    expect(engine.pids()).toHaveLength(1);
  }, 90_000);
});
