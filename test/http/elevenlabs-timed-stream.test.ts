import { readFileSync } from 'node:fs';
import { ElevenLabsClient, type ElevenLabs } from '@elevenlabs/elevenlabs-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../helpers/server-process.js';

const VOICE = 'espeak-ng:en-us';

let server: RunningServer;
let client: ElevenLabsClient;

function rssMb(pid: number): number {
  return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}

beforeAll(async () => {
  // Audio as long as a limit lets through: the answer's size is what is measured, not the budget.
  server = await startServer({ MAX_AUDIO_SECONDS: '4000', JOB_TIMEOUT_MS: '600000' });
  client = new ElevenLabsClient({ baseUrl: server.baseUrl, apiKey: 'anything', maxRetries: 0, timeoutInSeconds: 300 });
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

describe('/with-timestamps written as a stream (issue 36, finding 7)', () => {
  it('answers 1,200 s of 48 kHz PCM (154 MB of JSON) to the SDK with the API process bounded in memory', async () => {
    const pid = server.child.pid as number;
    const text = `Hello.${'<break time="10s"/>'.repeat(120)} Goodbye.`;
    const before = rssMb(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 20);
    const started = performance.now();
    const response = await client.textToSpeech
      .convertWithTimestamps(VOICE, { text: `<speak>${text}</speak>`, outputFormat: 'pcm_48000' })
      .finally(() => clearInterval(sampler));
    const seconds = (performance.now() - started) / 1000;
    const audio = Buffer.from(response.audioBase64, 'base64');
    const alignment = response.alignment as ElevenLabs.CharacterAlignmentResponseModel;
    console.log(`with-timestamps, 1,200 s of pcm_48000: ${(response.audioBase64.length / 1e6).toFixed(1)} MB of base64 in ${seconds.toFixed(1)} s; API RSS ${before.toFixed(0)} MB before, ${peak.toFixed(0)} MB peak`);
    expect(audio.length).toBeGreaterThan(1200 * 48_000 * 2);
    expect(audio.length % 2).toBe(0);
    expect(alignment.characters.join('')).toContain('Goodbye.');
    expect(alignment.characterStartTimesSeconds.at(-1)).toBeGreaterThan(1200);
    expect(response.normalizedAlignment).toEqual(alignment);
    // Built whole, the answer took the process up by more than three times its size (+650 MB here).
    expect(peak - before).toBeLessThan(120);
  }, 300_000);
});
