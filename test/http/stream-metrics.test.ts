import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/helpers.js';

describe('a stream that fails after its first bytes', () => {
  // It stops after its first sentences when the text turns out longer than the audio limit allows.
  // No sentence cache: its sentences must take the time to speak that lets the stream begin before the limit is found.
  const t = useTestApp({ MAX_AUDIO_SECONDS: '20', SENTENCE_CACHE_MB: '0' });
  const input = Array.from({ length: 12 }, (_, index) => `Sentence ${index + 1} of a text that speaks for far longer than twenty seconds in all.`).join(' ');

  it('is cut off, never finished as if whole, and counted by the error that cut it', async () => {
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      // The status and the first bytes went out; a cut-off body is all a client can then be told.
      const outcome = await t.app
        .inject({ method: 'POST', url: '/v1/audio/speech', payload: { model: 'tts-1', voice: 'flite:slt', input, response_format: 'pcm' } })
        .then(
          (response) => `answered ${response.statusCode} in full`,
          (error: unknown) => (error as { code?: string }).code,
        );
      expect(outcome).toBe('LIGHT_ECONNRESET');
    }
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^voxreel_streams_cut_total\{code="OUTPUT_TOO_LONG"\} 3$/m);
    expect(metrics).not.toMatch(/^voxreel_job_duration_seconds_count\{operation="speech",outcome="success"\}/m);
  });
});
