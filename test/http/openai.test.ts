import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { rms } from '../../src/speech/pcm.js';
import { buildTestApp, useTestApp, type TestApp } from '../helpers/helpers.js';
import { ffmpegPids, meanVolume, probe } from '../helpers/media.js';

const SENTENCE = 'The quick brown fox jumps over the lazy dog, then rests in the warm afternoon sun.';
const LONG_INPUT = Array.from({ length: 40 }, (_, i) => `This is sentence number ${i + 1}, spoken in one go.`).join(' ');

const t = useTestApp();
let client: OpenAI;

async function listen(app: TestApp): Promise<string> {
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.app.server.address() as { port: number };
  return `http://127.0.0.1:${port}/v1`;
}

beforeAll(async () => {
  client = new OpenAI({ baseURL: await listen(t), apiKey: 'anything', maxRetries: 0 });
});

let received = 0;
async function saved(response: Response, extension: string): Promise<{ file: string; bytes: Buffer }> {
  const bytes = Buffer.from(await response.arrayBuffer());
  const file = path.join(t.outputDir, `received-${(received += 1)}.${extension}`);
  await writeFile(file, bytes);
  return { file, bytes };
}

describe('POST /v1/audio/speech with the openai package', () => {
  const cases = [
    { format: 'mp3', contentType: 'audio/mpeg', formatName: 'mp3', codec: 'mp3', sampleRate: 24_000 },
    { format: 'opus', contentType: 'audio/ogg', formatName: 'ogg', codec: 'opus', sampleRate: 48_000 },
    { format: 'aac', contentType: 'audio/aac', formatName: 'aac', codec: 'aac', sampleRate: 24_000 },
    { format: 'flac', contentType: 'audio/flac', formatName: 'flac', codec: 'flac', sampleRate: 24_000 },
    { format: 'wav', contentType: 'audio/wav', formatName: 'wav', codec: 'pcm_s16le', sampleRate: 24_000 },
  ] as const;

  for (const expected of cases) {
    it(`returns playable ${expected.format}`, async () => {
      const response = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: SENTENCE, response_format: expected.format });
      expect(response.headers.get('content-type')).toContain(expected.contentType);
      const { file } = await saved(response, expected.format);
      const info = await probe(file);
      expect(info.formatName).toBe(expected.formatName);
      expect(info.streams[0]?.codecName).toBe(expected.codec);
      // Opus always decodes at 48 kHz; what was encoded is 24 kHz.
      expect(info.streams[0]?.sampleRate).toBe(expected.sampleRate);
      expect(info.duration).toBeGreaterThan(2);
      expect(info.duration).toBeLessThan(10);
      expect(await meanVolume(file)).toBeGreaterThan(-45);
    });
  }

  it('returns raw 24 kHz 16-bit little-endian pcm', async () => {
    const wav = await saved(await client.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'nova', input: SENTENCE, response_format: 'wav' }), 'wav');
    const pcm = await saved(await client.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'nova', input: SENTENCE, response_format: 'pcm' }), 'pcm');
    expect(pcm.bytes.length % 2).toBe(0);
    const samples = new Int16Array(pcm.bytes.buffer, pcm.bytes.byteOffset, pcm.bytes.length / 2);
    const seconds = samples.length / 24_000;
    expect(Math.abs(seconds - (await probe(wav.file)).duration)).toBeLessThan(0.05);
    expect(rms(samples)).toBeGreaterThan(0.01);
  });

  it('accepts voxreel voice ids, voice objects, every listed model, speed and ignored instructions', async () => {
    const { data } = await client.models.list();
    expect(data.map((model) => model.id)).toEqual(expect.arrayContaining(['tts-1', 'tts-1-hd', 'gpt-4o-mini-tts', 'voxreel']));
    const normal = await saved(await client.audio.speech.create({ model: 'voxreel', voice: 'espeak-ng:en-us', input: SENTENCE, response_format: 'wav' }), 'wav');
    const fast = await saved(
      await client.audio.speech.create({
        model: 'tts-1-hd',
        voice: { id: 'espeak-ng:en-us' },
        input: SENTENCE,
        response_format: 'wav',
        speed: 4,
        instructions: 'Speak like a pirate.',
      }),
      'wav',
    );
    const ratio = (await probe(fast.file)).duration / (await probe(normal.file)).duration;
    expect(ratio).toBeGreaterThan(0.2);
    expect(ratio).toBeLessThan(0.3);
  });

  it('maps every OpenAI voice name to a local voice', async () => {
    for (const voice of ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer', 'verse', 'marin', 'cedar']) {
      const response = await client.audio.speech.create({ model: 'tts-1', voice, input: 'Hi.', response_format: 'pcm' });
      expect((await response.arrayBuffer()).byteLength, voice).toBeGreaterThan(4800);
    }
  });
});

describe('streaming', () => {
  it('sends the first audio while the rest is still being synthesized', async () => {
    const response = await client.audio.speech.create({ model: 'tts-1', voice: 'espeak-ng:en-us', input: LONG_INPUT, response_format: 'mp3' });
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(first.value?.length).toBeGreaterThan(0);
    // The job (synthesis and encoding) is still running when the client holds the first bytes.
    expect(t.app.limiter.stats.running).toBe(1);
    const chunks = [Buffer.from(first.value as Uint8Array)];
    for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(Buffer.from(next.value));
    expect(chunks.length).toBeGreaterThan(2);
    const file = path.join(t.outputDir, 'streamed.mp3');
    await writeFile(file, Buffer.concat(chunks));
    expect((await probe(file)).duration).toBeGreaterThan(60);
  });

  it('sends server-sent events with stream_format sse', async () => {
    const response = await client.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'espeak-ng:en-us', input: SENTENCE, stream_format: 'sse' });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = (await response.text())
      .split('\n\n')
      .filter(Boolean)
      .map((block) => JSON.parse(block.replace(/^data: /, '')) as { type: string; audio?: string; usage?: Record<string, number> });
    const deltas = events.slice(0, -1);
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.every((event) => event.type === 'speech.audio.delta')).toBe(true);
    expect(events.at(-1)).toEqual({ type: 'speech.audio.done', usage: { input_tokens: SENTENCE.length, output_tokens: 0, total_tokens: SENTENCE.length } });
    const file = path.join(t.outputDir, 'events.mp3');
    await writeFile(file, Buffer.concat(deltas.map((event) => Buffer.from(event.audio ?? '', 'base64'))));
    expect((await probe(file)).duration).toBeGreaterThan(2);
    expect(await meanVolume(file)).toBeGreaterThan(-45);
  });

  it('stops synthesis and ffmpeg when the client goes away', async () => {
    const controller = new AbortController();
    const response = await client.audio.speech.create(
      { model: 'tts-1', voice: 'espeak-ng:en-us', input: LONG_INPUT.repeat(2).slice(0, 4096), response_format: 'mp3' },
      { signal: controller.signal },
    );
    await (response.body as ReadableStream<Uint8Array>).getReader().read();
    const encoding = ffmpegPids();
    expect(encoding.length).toBeGreaterThan(0);
    controller.abort();
    await expect.poll(() => t.app.limiter.stats.running, { timeout: 5000 }).toBe(0);
    // The stream's ffmpeg is gone; the others are spares, idle.
    const gone = () => {
      const alive = ffmpegPids();
      return encoding.filter((pid) => !alive.includes(pid)).length;
    };
    await expect.poll(gone, { timeout: 5000 }).toBe(1);
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/voxreel_job_duration_seconds_count\{operation="speech",outcome="CLIENT_CLOSED"\} 1/);
  });
});

describe('errors in OpenAI shape', () => {
  it('rejects an unknown voice with 400 invalid_value', async () => {
    const error = await client.audio.speech.create({ model: 'tts-1', voice: 'nobody', input: 'Hi.' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const apiError = error as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).toBe(400);
    expect(apiError.code).toBe('invalid_value');
    expect(apiError.param).toBe('voice');
    expect(apiError.type).toBe('invalid_request_error');
    expect(apiError.requestID).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('names the parameter at fault', async () => {
    const cases: Array<[Record<string, unknown>, number, string, string | null]> = [
      [{ model: 'tts-1', voice: 'alloy', input: 'x'.repeat(4097) }, 400, 'string_above_max_length', 'input'],
      [{ model: 'tts-1', voice: 'alloy' }, 400, 'missing_required_parameter', 'input'],
      [{ model: 'tts-2', voice: 'alloy', input: 'Hi.' }, 400, 'invalid_value', 'model'],
      [{ model: 'tts-1', voice: 'alloy', input: 'Hi.', response_format: 'ogg' }, 400, 'invalid_value', 'response_format'],
      [{ model: 'tts-1', voice: 'alloy', input: 'Hi.', speed: 5 }, 400, 'invalid_value', 'speed'],
      [{ model: 'tts-1', voice: 'alloy', input: 'Hi.', stream: true }, 400, 'unknown_parameter', 'stream'],
    ];
    for (const [body, status, code, param] of cases) {
      const response = await t.app.inject({ method: 'POST', url: '/v1/audio/speech', payload: body });
      expect(response.statusCode, JSON.stringify(body)).toBe(status);
      expect(response.json(), JSON.stringify(body)).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', param, code } });
    }
    const missing = await t.app.inject({ method: 'GET', url: '/v1/nothing-here' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', param: null, code: 'unknown_url' } });
  });

  it('answers a missing or wrong key with 401 when keys are configured', async () => {
    const keyed = await buildTestApp({ API_KEYS: 'secret-key' }, { engines: t.app.engines });
    try {
      const baseURL = await listen(keyed);
      const error = await new OpenAI({ baseURL, apiKey: 'wrong-key', maxRetries: 0 }).audio.speech
        .create({ model: 'tts-1', voice: 'alloy', input: 'Hi.' })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
      const apiError = error as InstanceType<typeof OpenAI.APIError>;
      expect(apiError.status).toBe(401);
      expect(apiError.code).toBe('invalid_api_key');
      expect(apiError.type).toBe('authentication_error');
      // The SDK always sends a key; other clients may send none.
      const bare = await fetch(`${baseURL}/models`);
      expect(bare.status).toBe(401);
      expect(await bare.json()).toEqual({ error: { message: expect.any(String), type: 'authentication_error', param: null, code: 'invalid_api_key' } });
      const { data } = await new OpenAI({ baseURL, apiKey: 'secret-key', maxRetries: 0 }).models.list();
      expect(data.length).toBeGreaterThan(0);
      expect(await keyed.listFiles()).toEqual([]);
    } finally {
      await keyed.close();
    }
  });
});
