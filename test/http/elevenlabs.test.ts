import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ElevenLabs, ElevenLabsClient, ElevenLabsError } from '@elevenlabs/elevenlabs-js';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, useTestApp, type TestApp } from '../helpers/helpers.js';
import { meanVolume, probe } from '../helpers/media.js';

const SENTENCE = 'The quick brown fox jumps over the lazy dog, then rests in the warm afternoon sun.';
const VOICE = 'espeak-ng:en-us';
const GEORGE = 'JBFqnCBsd6RMkjVDRZzb';

const t = useTestApp();
let client: ElevenLabsClient;

async function listen(app: TestApp): Promise<string> {
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.app.server.address() as { port: number };
  return `http://127.0.0.1:${port}`;
}

beforeAll(async () => {
  client = new ElevenLabsClient({ baseUrl: await listen(t), apiKey: 'anything', maxRetries: 0 });
});

async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<{ bytes: Buffer }> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return { bytes: Buffer.concat(chunks) };
}

let received = 0;
async function saved(bytes: Buffer, extension: string): Promise<string> {
  const file = path.join(t.outputDir, `received-${(received += 1)}.${extension}`);
  await writeFile(file, bytes);
  return file;
}

/** What a call rejected with. */
async function failure(call: Promise<unknown>): Promise<ElevenLabsError> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ElevenLabsError);
  return error as ElevenLabsError;
}

describe('text to speech with the official ElevenLabs SDK', () => {
  it('converts to an mp3 at 44.1 kHz by default, with a premade voice id', async () => {
    const { bytes } = await bytesOf(await client.textToSpeech.convert(GEORGE, { text: SENTENCE, modelId: 'eleven_multilingual_v2' }));
    const file = await saved(bytes, 'mp3');
    const info = await probe(file);
    expect(info.streams[0]?.codecName).toBe('mp3');
    expect(info.streams[0]?.sampleRate).toBe(44_100);
    expect(info.duration).toBeGreaterThan(1);
    expect(await meanVolume(file)).toBeGreaterThan(-45);
  });

  it('streams audio as it is synthesized, with a voxreel voice id', async () => {
    const long = Array.from({ length: 40 }, (_, i) => `This is sentence number ${i + 1}, spoken in one go.`).join(' ');
    const stream = await client.textToSpeech.stream(VOICE, { text: long, outputFormat: 'mp3_22050_32' });
    const reader = stream.getReader();
    const first = await reader.read();
    // The job (synthesis and encoding) is still running when the client holds the first bytes.
    expect(t.app.limiter.stats.running).toBe(1);
    const chunks = [Buffer.from(first.value as Uint8Array)];
    for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(Buffer.from(next.value));
    expect(chunks.length).toBeGreaterThan(2);
    const info = await probe(await saved(Buffer.concat(chunks), 'mp3'));
    expect(info.streams[0]?.sampleRate).toBe(22_050);
    expect(info.duration).toBeGreaterThan(60);
  });

  it('times every character with convertWithTimestamps', async () => {
    const response = await client.textToSpeech.convertWithTimestamps('Rachel', { text: SENTENCE });
    const info = await probe(await saved(Buffer.from(response.audioBase64, 'base64'), 'mp3'));
    expect(info.duration).toBeGreaterThan(1);
    const alignment = response.alignment as ElevenLabs.CharacterAlignmentResponseModel;
    expect(alignment.characters.join('')).toBe(SENTENCE);
    expect(alignment.characterStartTimesSeconds).toHaveLength(SENTENCE.length);
    expect(alignment.characterEndTimesSeconds).toHaveLength(SENTENCE.length);
    alignment.characterStartTimesSeconds.forEach((start, index) => {
      expect(alignment.characterEndTimesSeconds[index]).toBeGreaterThanOrEqual(start);
      if (index > 0) expect(start).toBeGreaterThanOrEqual(alignment.characterStartTimesSeconds[index - 1] as number);
    });
    const lastEnd = alignment.characterEndTimesSeconds.at(-1) as number;
    expect(Math.abs(lastEnd - info.duration)).toBeLessThan(0.6);
    // The word "lazy" is said after "quick".
    expect(alignment.characterStartTimesSeconds[SENTENCE.indexOf('lazy')]).toBeGreaterThan(alignment.characterStartTimesSeconds[SENTENCE.indexOf('quick')] as number);
    expect(response.normalizedAlignment).toEqual(alignment);
  });

  it('streams JSON chunks with timestamps', async () => {
    const stream = await client.textToSpeech.streamWithTimestamps(VOICE, { text: SENTENCE, outputFormat: 'mp3_44100_128' });
    const audio: Buffer[] = [];
    const characters: string[] = [];
    const starts: number[] = [];
    for await (const chunk of stream) {
      audio.push(Buffer.from(chunk.audioBase64, 'base64'));
      characters.push(...(chunk.alignment?.characters ?? []));
      starts.push(...(chunk.alignment?.characterStartTimesSeconds ?? []));
    }
    expect(audio.length).toBeGreaterThan(1);
    expect(characters.join('')).toBe(SENTENCE);
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    expect((await probe(await saved(Buffer.concat(audio), 'mp3'))).duration).toBeGreaterThan(1);
    // A long text streams as it is spoken: the first lines come while the job still runs, each sentence's characters
    // with the audio that follows them, at the times /with-timestamps gives the whole text.
    const long = Array.from({ length: 30 }, (_, i) => `This is sentence number ${i + 1}, spoken in turn.`).join(' ');
    const asked = performance.now();
    const streamed = await client.textToSpeech.streamWithTimestamps(VOICE, { text: long, outputFormat: 'mp3_22050_32' });
    const lines: Array<{ characters: string[]; starts: number[] }> = [];
    let firstLineMs: number | undefined;
    for await (const chunk of streamed) {
      firstLineMs ??= performance.now() - asked;
      lines.push({ characters: chunk.alignment?.characters ?? [], starts: chunk.alignment?.characterStartTimesSeconds ?? [] });
    }
    // Speaking the whole text first would hold the first line until the end (it did: ×0.9 and more of the whole time).
    expect(firstLineMs).toBeLessThan((performance.now() - asked) * 0.5);
    expect(lines.map((line) => line.characters.join('')).join('')).toBe(long);
    expect(lines.filter((line) => line.characters.length > 0).length).toBeGreaterThan(10);
    const whole = (await client.textToSpeech.convertWithTimestamps(VOICE, { text: long, outputFormat: 'mp3_22050_32' })).alignment as ElevenLabs.CharacterAlignmentResponseModel;
    const streamedStarts = lines.flatMap((line) => line.starts);
    streamedStarts.forEach((start, index) => expect(Math.abs(start - (whole.characterStartTimesSeconds[index] as number)), `character ${index}`).toBeLessThan(0.1));
    // Raw PCM comes in whole samples, line by line.
    for await (const chunk of await client.textToSpeech.streamWithTimestamps(VOICE, { text: SENTENCE, outputFormat: 'pcm_22050' })) {
      expect(Buffer.from(chunk.audioBase64, 'base64').length % 2).toBe(0);
    }
  });

  it('writes raw pcm and μ-law at the rate named', async () => {
    const wav = await probe(await saved((await bytesOf(await client.textToSpeech.convert(VOICE, { text: SENTENCE, outputFormat: 'wav_16000' }))).bytes, 'wav'));
    expect(wav.streams[0]?.sampleRate).toBe(16_000);
    const cases = [
      { outputFormat: 'pcm_16000', rate: 16_000, bytesPerSample: 2 },
      { outputFormat: 'pcm_24000', rate: 24_000, bytesPerSample: 2 },
      { outputFormat: 'ulaw_8000', rate: 8_000, bytesPerSample: 1 },
    ] as const;
    for (const { outputFormat, rate, bytesPerSample } of cases) {
      const { bytes } = await bytesOf(await client.textToSpeech.convert(VOICE, { text: SENTENCE, outputFormat }));
      const seconds = bytes.length / (rate * bytesPerSample);
      expect(Math.abs(seconds - wav.duration), outputFormat).toBeLessThan(0.1);
    }
  });

  it('speaks faster with voice_settings.speed 1.2', async () => {
    const seconds = async (speed: number) => {
      const { bytes } = await bytesOf(await client.textToSpeech.convert(VOICE, { text: SENTENCE, outputFormat: 'pcm_16000', voiceSettings: { speed, stability: 0.3 } }));
      return bytes.length / 32_000;
    };
    const ratio = (await seconds(1.2)) / (await seconds(1));
    expect(ratio).toBeGreaterThan(0.75);
    expect(ratio).toBeLessThan(0.9);
  });
});

describe('voices and models', () => {
  it('lists the premade voices and the local ones, and gets one', async () => {
    const { voices } = await client.voices.getAll();
    const george = voices.find((voice) => voice.voiceId === GEORGE);
    expect(george).toMatchObject({ name: 'George', category: 'premade', labels: { gender: 'male', accent: 'british' } });
    expect(george?.previewUrl).toMatch(/\/voices\/[^/]+\/preview$/);
    expect(voices.some((voice) => voice.voiceId === VOICE)).toBe(true);
    expect(await client.voices.get(GEORGE)).toMatchObject({ voiceId: GEORGE, name: 'George' });
    expect(await client.voices.get(VOICE)).toMatchObject({ voiceId: VOICE, labels: { language: 'en', engine: 'espeak-ng' } });
    const preview = await fetch(george?.previewUrl ?? '');
    expect(preview.headers.get('content-type')).toContain('audio/mpeg');
  });

  it('lists models in ElevenLabs shape to its clients, in OpenAI shape to others', async () => {
    const models = await client.models.list();
    expect(models.map((model) => model.modelId)).toContain('eleven_multilingual_v2');
    expect(models[0]).toMatchObject({ canDoTextToSpeech: true });
    expect(models[0]?.languages?.map((language) => language.languageId)).toContain('en');
    const openAi = await t.app.inject({ method: 'GET', url: '/v1/models' });
    expect(openAi.json()).toMatchObject({ object: 'list' });
  });

  it('are in the OpenAPI document', async () => {
    const paths = Object.keys((await t.app.inject({ method: 'GET', url: '/docs/json' })).json<{ paths: Record<string, unknown> }>().paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/v1/text-to-speech/{voice_id}',
        '/v1/text-to-speech/{voice_id}/stream',
        '/v1/text-to-speech/{voice_id}/with-timestamps',
        '/v1/text-to-speech/{voice_id}/stream/with-timestamps',
        '/v1/voices',
        '/v1/voices/{voice_id}',
        '/v1/models',
      ]),
    );
  });
});

describe('errors in ElevenLabs shape', () => {
  it('answers an unknown voice with 404 voice_not_found', async () => {
    const error = await failure(client.textToSpeech.convert('NoSuchVoice', { text: 'Hi.' }));
    expect(error.statusCode).toBe(404);
    expect(error.body).toEqual({ detail: { status: 'voice_not_found', message: expect.any(String) } });
    expect((await failure(client.voices.get('NoSuchVoice'))).statusCode).toBe(404);
  });

  it('answers a bad output_format or speed with 422', async () => {
    const error = await failure(client.textToSpeech.convert(VOICE, { text: 'Hi.' }, { queryParams: { output_format: 'mp3_44100_999' } }));
    expect(error).toBeInstanceOf(ElevenLabs.UnprocessableEntityError);
    expect(error.statusCode).toBe(422);
    expect(error.body).toEqual({ detail: [{ loc: ['query', 'output_format'], msg: expect.any(String), type: 'enum' }] });
    const speed = await failure(client.textToSpeech.convert(VOICE, { text: 'Hi.', voiceSettings: { speed: 2 } }));
    expect(speed.statusCode).toBe(422);
    expect(speed.body).toEqual({ detail: [{ loc: ['body', 'voice_settings', 'speed'], msg: expect.any(String), type: 'less_than_equal' }] });
  });

  it("takes ElevenLabs' other fields, and null for fields not set; an unknown route under its prefix has its body", async () => {
    const payload = {
      text: 'Hi.',
      model_id: null,
      voice_settings: { stability: null, similarity_boost: 0.8, style: 0.1, use_speaker_boost: false, speed: null },
      pronunciation_dictionary_locators: [],
      seed: 42,
    };
    const accepted = await t.app.inject({ method: 'POST', url: `/v1/text-to-speech/Rachel?output_format=pcm_16000&enable_logging=false`, payload });
    expect(accepted.statusCode).toBe(200);
    expect(accepted.headers['content-type']).toBe('audio/pcm');
    expect(accepted.rawPayload.length).toBeGreaterThan(16_000);
    const missing = await t.app.inject({ method: 'POST', url: `/v1/text-to-speech/Rachel/nowhere`, payload });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ detail: { status: 'not_found', message: expect.any(String) } });
    const noText = await t.app.inject({ method: 'POST', url: `/v1/text-to-speech/Rachel`, payload: { model_id: 'eleven_v3' } });
    expect(noText.statusCode).toBe(422);
    expect(noText.json()).toEqual({ detail: [{ loc: ['body', 'text'], msg: expect.any(String), type: 'missing' }] });
  });

  it('answers a missing or wrong key with 401 when keys are configured, and takes xi-api-key', async () => {
    const keyed = await buildTestApp({ API_KEYS: 'secret-key' }, { engines: t.app.engines });
    try {
      const baseUrl = await listen(keyed);
      const wrong = await failure(new ElevenLabsClient({ baseUrl, apiKey: 'wrong-key', maxRetries: 0 }).textToSpeech.convert(VOICE, { text: 'Hi.' }));
      expect(wrong.statusCode).toBe(401);
      expect(wrong.body).toEqual({ detail: { status: 'invalid_api_key', message: expect.any(String) } });
      const bare = await fetch(`${baseUrl}/v1/voices`);
      expect(bare.status).toBe(401);
      expect(await bare.json()).toEqual({ detail: { status: 'invalid_api_key', message: expect.any(String) } });
      const { voices } = await new ElevenLabsClient({ baseUrl, apiKey: 'secret-key', maxRetries: 0 }).voices.getAll();
      expect(voices.length).toBeGreaterThan(0);
    } finally {
      await keyed.close();
    }
  });
});

describe('text to dialogue with the official ElevenLabs SDK', () => {
  const INPUTS = [
    { text: 'Knock knock.', voiceId: GEORGE },
    { text: 'Who is there?', voiceId: 'kokoro:af_heart' },
    { text: 'Lettuce.', voiceId: 'flite:slt' },
  ];

  it('converts a dialogue of three voices (and engines) to one mp3, each turn said in turn', async () => {
    const { bytes } = await bytesOf(await client.textToDialogue.convert({ inputs: INPUTS }));
    const file = await saved(bytes, 'mp3');
    const info = await probe(file);
    expect(info.streams[0]?.codecName).toBe('mp3');
    expect(info.streams[0]?.sampleRate).toBe(44_100);
    // Three short turns and the pauses between speakers.
    expect(info.duration).toBeGreaterThan(2);
    const alone = await saved((await bytesOf(await client.textToSpeech.convert(GEORGE, { text: 'Knock knock.' }))).bytes, 'mp3');
    expect(info.duration).toBeGreaterThan((await probe(alone)).duration + 1);
  });

  it('streams a dialogue as it is spoken, in the format asked for', async () => {
    const { bytes } = await bytesOf(await client.textToDialogue.stream({ inputs: INPUTS, outputFormat: 'pcm_16000' }));
    // 16-bit mono PCM at 16 kHz: whole samples, more than two seconds of them.
    expect(bytes.length % 2).toBe(0);
    expect(bytes.length / 2 / 16_000).toBeGreaterThan(2);
  });

  it("times every character and each turn with convertWithTimestamps: its voice segments where its words are heard", async () => {
    const inputs = [
      { text: 'Knock  knock.', voiceId: GEORGE },
      { text: 'Who is there? Tell me.', voiceId: 'flite:slt' },
      { text: 'Lettuce.', voiceId: GEORGE },
    ];
    const response = await client.textToDialogue.convertWithTimestamps({ inputs, outputFormat: 'pcm_22050' });
    const samples = new Int16Array(Uint8Array.from(Buffer.from(response.audioBase64, 'base64')).buffer);
    const seconds = samples.length / 22_050;
    const alignment = response.alignment as ElevenLabs.CharacterAlignmentResponseModel;
    // The turns as read, one a line (white space collapsed, as SSML reads prose).
    expect(alignment.characters.join('')).toBe('Knock knock.\nWho is there? Tell me.\nLettuce.');
    const segments = response.voiceSegments;
    expect(segments.map((segment) => [segment.voiceId, segment.dialogueInputIndex])).toEqual([
      [GEORGE, 0],
      ['flite:slt', 1],
      [GEORGE, 2],
    ]);
    const said = (segment: ElevenLabs.VoiceSegment) => alignment.characters.slice(segment.characterStartIndex, segment.characterEndIndex).join('');
    expect(segments.map(said)).toEqual(['Knock knock.', 'Who is there? Tell me.', 'Lettuce.']);
    // In order, each within the audio, the pause between speakers between them (TURN_SECONDS, 0.4 s).
    segments.forEach((segment, index) => {
      expect(segment.endTimeSeconds).toBeGreaterThan(segment.startTimeSeconds);
      expect(segment.startTimeSeconds).toBe(alignment.characterStartTimesSeconds[segment.characterStartIndex]);
      expect(segment.endTimeSeconds).toBeLessThanOrEqual(seconds + 0.05);
      const before = segments[index - 1];
      if (before) expect(segment.startTimeSeconds - before.endTimeSeconds).toBeGreaterThan(0.3);
    });
    // Speech within each segment, near silence in the pauses between them (the audio is where the times say).
    const rms = (from: number, to: number) => {
      const part = samples.subarray(Math.round(from * 22_050), Math.round(to * 22_050));
      return Math.sqrt(part.reduce((sum, sample) => sum + sample * sample, 0) / Math.max(1, part.length));
    };
    for (const segment of segments) expect(rms(segment.startTimeSeconds, segment.endTimeSeconds)).toBeGreaterThan(500);
    // The middle 0.2 s of each pause (a neural voice's first sound comes some 0.1 s before its first word's time: its
    // onset is in the blank token before the word's first phoneme).
    for (const [before, after] of [[segments[0], segments[1]], [segments[1], segments[2]]] as const) {
      const middle = ((before as ElevenLabs.VoiceSegment).endTimeSeconds + (after as ElevenLabs.VoiceSegment).startTimeSeconds) / 2;
      expect(rms(middle - 0.1, middle + 0.1), `${middle} s`).toBeLessThan(150);
    }
  });

  it('streams a dialogue as JSON lines with streamWithTimestamps: the audio, characters and voice segments of the one answer', async () => {
    const inputs = [
      { text: 'One sentence here. And a second one.', voiceId: VOICE },
      { text: 'Then another voice answers.', voiceId: 'flite:slt' },
    ];
    const lines: ElevenLabs.StreamingAudioChunkWithTimestampsAndVoiceSegmentsResponseModel[] = [];
    for await (const line of await client.textToDialogue.streamWithTimestamps({ inputs, outputFormat: 'mp3_22050_32' })) lines.push(line);
    expect(lines.length).toBeGreaterThan(1);
    const characters = lines.flatMap((line) => line.alignment?.characters ?? []);
    expect(characters.join('')).toBe('One sentence here. And a second one.\nThen another voice answers.');
    const whole = await client.textToDialogue.convertWithTimestamps({ inputs, outputFormat: 'mp3_22050_32' });
    const starts = lines.flatMap((line) => line.alignment?.characterStartTimesSeconds ?? []);
    starts.forEach((start, index) => expect(Math.abs(start - (whole.alignment?.characterStartTimesSeconds[index] as number)), `character ${index}`).toBeLessThan(0.1));
    // Each line's share of the turns: joined, they cover each turn once, numbered in the whole dialogue.
    const shares = lines.flatMap((line) => line.voiceSegments);
    for (const [index, segment] of whole.voiceSegments.entries()) {
      const own = shares.filter((share) => share.dialogueInputIndex === index);
      expect(own.length).toBeGreaterThan(0);
      expect(own.every((share) => share.voiceId === segment.voiceId)).toBe(true);
      expect([own[0]?.characterStartIndex, own.at(-1)?.characterEndIndex]).toEqual([segment.characterStartIndex, segment.characterEndIndex]);
      own.slice(1).forEach((share, at) => expect(share.characterStartIndex).toBe(own[at]?.characterEndIndex));
    }
    const audio = Buffer.concat(lines.map((line) => Buffer.from(line.audioBase64, 'base64')));
    expect((await probe(await saved(audio, 'mp3'))).duration).toBeGreaterThan(3);
  });

  it('refuses an unknown voice in a turn with ElevenLabs\' body, naming the turn', async () => {
    const error = await failure(client.textToDialogue.convert({ inputs: [INPUTS[0] as (typeof INPUTS)[number], { text: 'Hi.', voiceId: 'NoSuchVoice' }] }));
    expect(error.statusCode).toBe(404);
    expect(error.body).toEqual({ detail: { status: 'voice_not_found', message: expect.stringContaining('NoSuchVoice') } });
  });
});
