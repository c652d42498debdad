// Issue 23: pronunciation lexicons over HTTP. Uploaded, read, listed and deleted by the key that made them and
// by no other; checked on upload (malformed XML, entities, size, nesting); named in synthesis requests and carried
// on to the synthesizer, queued jobs included.
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ErrorBody } from '../../src/api/errors.js';
import type { JobAccepted, JobStatus } from '../../src/api/jobs.js';
import { LEXICON_MEDIA_TYPES, type LexiconList, type LexiconResponse } from '../../src/api/lexicons.js';
import type { OpenAiErrorBody } from '../../src/api/openai.js';
import { MAX_LEXICONS_PER_CLIENT } from '../../src/speech/lexicon-store.js';
import type { Lexicon } from '../../src/speech/lexicon.js';
import { loadConfig } from '../../src/config.js';
import { openWorker } from '../../src/app/open-worker.js';
import type { JobSpec } from '../../src/jobs/spec.js';
import { buildTestApp, useTestApp, type TestApp } from '../helpers/helpers.js';
import { useRedis } from '../helpers/redis-server.js';

const KEYS = { a: 'lexicon-key-a-0001', b: 'lexicon-key-b-0002' } as const;
type Tenant = keyof typeof KEYS;
const auth = (tenant: Tenant) => ({ authorization: `Bearer ${KEYS[tenant]}` });

const DOCUMENT = `<?xml version="1.0" encoding="UTF-8"?>
<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="en-US">
  <lexeme>
    <grapheme>voxreel</grapheme>
    <alias>vox reel</alias>
  </lexeme>
  <lexeme>
    <grapheme>GIF</grapheme>
    <phoneme>dʒɪf</phoneme>
  </lexeme>
</lexicon>
`;

function lexemes(count: number): string {
  return DOCUMENT.replace(/<lexeme>[\s\S]*<\/lexeme>/, '<lexeme><grapheme>a</grapheme><alias>b</alias></lexeme>\n'.repeat(count));
}

function upload(t: TestApp, tenant: Tenant, payload: string, contentType = 'application/pls+xml') {
  return t.app.inject({ method: 'POST', url: '/lexicons', payload, headers: { ...auth(tenant), 'content-type': contentType } });
}

async function stored(t: TestApp, tenant: Tenant, payload = DOCUMENT): Promise<LexiconResponse> {
  const response = await upload(t, tenant, payload);
  expect(response.statusCode, response.body).toBe(201);
  return response.json<LexiconResponse>();
}

const error = (response: { json<T>(): T }) => response.json<ErrorBody>().error;

const APP_ENV = { API_KEYS: `${KEYS.a},${KEYS.b}`, CLIENT_MAX_JOBS: '0', CLIENT_CHARACTERS_PER_WINDOW: '0' };

describe('pronunciation lexicons', () => {
  const t = useTestApp(APP_ENV);
  afterEach(() => vi.restoreAllMocks());

  it('are uploaded, read (as facts or the document), listed and deleted', async () => {
    const lexicon = await stored(t, 'a');
    expect(lexicon).toMatchObject({ status: 'success', language: 'en-US', alphabet: 'ipa', lexemes: 2, bytes: Buffer.byteLength(DOCUMENT) });
    expect(lexicon.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(Date.parse(lexicon.created_at)).not.toBeNaN();

    const read = await t.app.inject({ method: 'GET', url: `/lexicons/${lexicon.id}`, headers: auth('a') });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(lexicon);
    const document = await t.app.inject({ method: 'GET', url: `/lexicons/${lexicon.id}`, headers: { ...auth('a'), accept: 'application/pls+xml' } });
    expect(document.statusCode).toBe(200);
    expect(document.headers['content-type']).toMatch(/^application\/pls\+xml/);
    expect(document.body).toBe(DOCUMENT);

    const second = await stored(t, 'a', DOCUMENT.replace('en-US', 'en-GB'));
    const list = await t.app.inject({ method: 'GET', url: '/lexicons', headers: auth('a') });
    expect(list.json<LexiconList>().lexicons.map(({ id, language }) => ({ id, language }))).toEqual([
      { id: lexicon.id, language: 'en-US' },
      { id: second.id, language: 'en-GB' },
    ]);

    const deleted = await t.app.inject({ method: 'DELETE', url: `/lexicons/${lexicon.id}`, headers: auth('a') });
    expect(deleted.statusCode).toBe(204);
    const gone = await t.app.inject({ method: 'GET', url: `/lexicons/${lexicon.id}`, headers: auth('a') });
    expect(gone.statusCode).toBe(404);
    expect(error(gone).code).toBe('LEXICON_NOT_FOUND');
    expect((await t.app.inject({ method: 'DELETE', url: `/lexicons/${second.id}`, headers: auth('a') })).statusCode).toBe(204);
    expect((await t.app.inject({ method: 'GET', url: '/lexicons', headers: auth('a') })).json<LexiconList>().lexicons).toEqual([]);
  });

  it('belong to the key that uploaded them: to another, 404 on GET and DELETE, 422 where a request names one', async () => {
    const lexicon = await stored(t, 'a');
    for (const [method, accept] of [['GET', 'application/json'], ['GET', 'application/pls+xml'], ['DELETE', '*/*']] as const) {
      const response = await t.app.inject({ method, url: `/lexicons/${lexicon.id}`, headers: { ...auth('b'), accept } });
      expect(response.statusCode, `${method} ${accept} by b`).toBe(404);
      expect(error(response).code).toBe('LEXICON_NOT_FOUND');
    }
    expect((await t.app.inject({ method: 'GET', url: '/lexicons', headers: auth('b') })).json<LexiconList>().lexicons).toEqual([]);

    const own = await stored(t, 'b');
    const requests = [
      { url: '/tts', payload: { text: 'Hi.', voice: 'espeak-ng:en-us', lexicons: [own.id, lexicon.id] } },
      { url: '/tts', payload: { text: 'Hi.', voice: 'espeak-ng:en-us', lexicons: [own.id, lexicon.id], async: true } },
      { url: '/tts-video', payload: { text: 'Hi.', voice: 'espeak-ng:en-us', lexicons: [own.id, lexicon.id] } },
    ];
    for (const { url, payload } of requests) {
      const refused = await t.app.inject({ method: 'POST', url, payload, headers: auth('b') });
      expect(refused.statusCode, `${url} ${refused.body}`).toBe(422);
      expect(error(refused)).toMatchObject({ code: 'UNKNOWN_LEXICON', field: 'lexicons.1' });
    }
    const openAi = { model: 'tts-1', input: 'Hi.', voice: 'espeak-ng:en-us', lexicons: [lexicon.id] };
    const refused = await t.app.inject({ method: 'POST', url: '/v1/audio/speech', payload: openAi, headers: auth('b') });
    expect(refused.statusCode).toBe(422);
    expect(refused.json<OpenAiErrorBody>().error).toMatchObject({ code: 'unknown_lexicon', param: 'lexicons.0' });

    // Still the uploader's, untouched by the other key's DELETE.
    expect((await t.app.inject({ method: 'GET', url: `/lexicons/${lexicon.id}`, headers: auth('a') })).statusCode).toBe(200);
  });

  it('reach the synthesizer, read, in the order named: /tts, a queued /tts, /tts-video and /v1/audio/speech', async () => {
    const first = await stored(t, 'a');
    const second = await stored(t, 'a', DOCUMENT.replace('vox reel', 'vocks reel'));
    const aliasesOf = (lexicons: Lexicon[] | undefined) => lexicons?.map((lexicon) => lexicon.lexemes[0]?.pronunciations[0]?.text);
    const expected = ['vox reel', 'vocks reel'];
    const lexicons = [first.id, second.id];

    const post = (url: string, payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url, payload: { voice: 'espeak-ng:en-us', ...payload }, headers: auth('a') });

    const render = vi.spyOn(t.app.synthesizer, 'renderAudio');
    const made = await post('/tts', { text: 'voxreel speaks.', lexicons });
    expect(made.statusCode, made.body).toBe(200);
    expect(aliasesOf(render.mock.calls.at(-1)?.[0].lexicons)).toEqual(expected);

    const accepted = await post('/tts', { text: 'voxreel queued.', lexicons: [second.id], async: true });
    expect(accepted.statusCode, accepted.body).toBe(202);
    const job = await settle(t, accepted.json<JobAccepted>().id);
    expect(job.state, JSON.stringify(job)).toBe('succeeded');
    expect(aliasesOf(render.mock.calls.at(-1)?.[0].lexicons)).toEqual(['vocks reel']);

    const speak = vi.spyOn(t.app.synthesizer, 'speak');
    const video = await post('/tts-video', { text: 'voxreel.', resolution: '720p', lexicons });
    expect(video.statusCode, video.body).toBe(200);
    expect(aliasesOf(speak.mock.calls.at(-1)?.[0].lexicons)).toEqual(expected);

    const stream = vi.spyOn(t.app.synthesizer, 'streamAudio');
    const speech = await post('/v1/audio/speech', { model: 'tts-1', input: 'voxreel.', lexicons });
    expect(speech.statusCode, speech.body).toBe(200);
    expect(aliasesOf(stream.mock.calls.at(-1)?.[0].lexicons)).toEqual(expected);
  });

  it('a job carries the ids and reads them again where it runs: a lexicon deleted after the job was checked fails it, 422', async () => {
    const lexicon = await stored(t, 'a');
    const tenant = `key:${createHash('sha256').update(KEYS.a).digest('hex').slice(0, 16)}`;
    const spec: JobSpec = { operation: 'tts', request: { text: 'voxreel.', voice: 'espeak-ng:en-us', lexicons: [lexicon.id] } };
    await t.app.executor.check(spec, tenant);
    expect((await t.app.inject({ method: 'DELETE', url: `/lexicons/${lexicon.id}`, headers: auth('a') })).statusCode).toBe(204);
    const made = t.app.executor.execute(spec, { tenant, signal: new AbortController().signal });
    await expect(made).rejects.toMatchObject({ code: 'UNKNOWN_LEXICON', field: 'lexicons.0', statusCode: 422 });
  });

  it('refuses malformed XML with 400 naming the line and column', async () => {
    const response = await upload(t, 'a', DOCUMENT.replace('</grapheme>\n    <alias>', '</graphem>\n    <alias>'));
    expect(response.statusCode).toBe(400);
    expect(error(response).code).toBe('INVALID_LEXICON');
    expect(error(response).message).toMatch(/^The lexicon is not valid PLS 1\.0: line 4, column \d+: /);
  });

  it('refuses a DOCTYPE with entities (billion laughs) at once, expanding nothing', async () => {
    const entities = Array.from({ length: 9 }, (_, level) => `<!ENTITY l${level + 1} "${`&l${level};`.repeat(10)}">`).join('\n');
    const laughs = `<?xml version="1.0"?>\n<!DOCTYPE lexicon [\n<!ENTITY l0 "lol">\n${entities}\n]>\n<lexicon>&l9;</lexicon>`;
    const started = performance.now();
    const response = await upload(t, 'a', laughs);
    expect(performance.now() - started).toBeLessThan(500);
    expect(response.statusCode).toBe(400);
    expect(error(response).message).toMatch(/line 13, column \d+: a DOCTYPE is not accepted/);
  });

  it('refuses past the limits: the bytes (413), the lexemes, the nesting (400)', async () => {
    const huge = await upload(t, 'a', lexemes(10_000));
    expect(huge.statusCode).toBe(413);
    expect(error(huge).code).toBe('PAYLOAD_TOO_LARGE');

    const many = await upload(t, 'a', lexemes(1001));
    expect(many.statusCode).toBe(400);
    expect(error(many).message).toMatch(/more than 1000 lexemes/);

    const deep = await upload(t, 'a', DOCUMENT.replace('<lexeme>', `<metadata>${'<d>'.repeat(100)}${'</d>'.repeat(100)}</metadata><lexeme>`));
    expect(deep.statusCode).toBe(400);
    expect(error(deep).message).toMatch(/<d> is nested deeper than 8 elements/);
  });

  it('takes the XML media types only, and only here', async () => {
    for (const type of ['application/xml', 'text/xml; charset=utf-8']) expect((await upload(t, 'a', DOCUMENT, type)).statusCode, type).toBe(201);
    const json = await upload(t, 'a', JSON.stringify({ document: DOCUMENT }), 'application/json');
    expect(json.statusCode).toBe(415);
    expect(error(json).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const xmlTts = await t.app.inject({ method: 'POST', url: '/tts', payload: DOCUMENT, headers: { ...auth('a'), 'content-type': 'application/xml' } });
    expect(xmlTts.statusCode).toBe(415);

    type Paths = Record<string, Record<string, { requestBody?: { content: Record<string, unknown> }; responses?: Record<string, { content?: Record<string, unknown> }> }>>;
    const { paths } = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json<{ paths: Paths }>();
    expect(Object.keys(paths['/lexicons']?.post?.requestBody?.content ?? {})).toEqual([...LEXICON_MEDIA_TYPES]);
    expect(Object.keys(paths['/lexicons/{id}']?.get?.responses?.['200']?.content ?? {})).toEqual(['application/json', 'application/pls+xml']);
  });

  it('names at most 5 lexicons in a request', async () => {
    const lexicon = await stored(t, 'a');
    const payload = { text: 'Hi.', voice: 'espeak-ng:en-us', lexicons: Array.from({ length: 6 }, () => lexicon.id) };
    const response = await t.app.inject({ method: 'POST', url: '/tts', payload, headers: auth('a') });
    expect(response.statusCode).toBe(400);
    expect(error(response)).toMatchObject({ code: 'VALIDATION_ERROR', field: 'lexicons' });
  });

  it(`keeps at most ${MAX_LEXICONS_PER_CLIENT} per key: then 507 until one is deleted`, async () => {
    const kept = (await t.app.inject({ method: 'GET', url: '/lexicons', headers: auth('b') })).json<LexiconList>().lexicons;
    const made = [...kept];
    while (made.length < MAX_LEXICONS_PER_CLIENT) made.push(await stored(t, 'b'));
    const refused = await upload(t, 'b', DOCUMENT);
    expect(refused.statusCode).toBe(507);
    expect(error(refused).code).toBe('LEXICON_QUOTA_EXCEEDED');
    // Another key's are its own.
    expect((await upload(t, 'a', DOCUMENT)).statusCode).toBe(201);
    expect((await t.app.inject({ method: 'DELETE', url: `/lexicons/${made[0]!.id}`, headers: auth('b') })).statusCode).toBe(204);
    expect((await upload(t, 'b', DOCUMENT)).statusCode).toBe(201);
  });
});

describe('pronunciation lexicons with jobs queued in Redis', () => {
  const redis = useRedis();

  it("a `voxreel worker` reads a job's lexicons from the shared ASSETS_DIR by their ids, and refuses one deleted since", async () => {
    const env = { ...APP_ENV, REDIS_URL: redis.url, CDN_URL: 'http://files.example/files', CACHE_MAX_ENTRIES: '0', SENTENCE_CACHE_MB: '0' };
    const api = await buildTestApp(env);
    try {
      const kept = await stored(api, 'a');
      const deleted = await stored(api, 'a');
      const submit = async (lexicons: string[]) => {
        const payload = { text: 'voxreel in a worker.', voice: 'espeak-ng:en-us', lexicons, async: true };
        const response = await api.app.inject({ method: 'POST', url: '/tts', payload, headers: auth('a') });
        expect(response.statusCode, response.body).toBe(202);
        return response.json<JobAccepted>().id;
      };
      const good = await submit([kept.id]);
      const gone = await submit([kept.id, deleted.id]);
      expect((await api.app.inject({ method: 'DELETE', url: `/lexicons/${deleted.id}`, headers: auth('a') })).statusCode).toBe(204);

      const config = loadConfig({ ...env, OUTPUT_DIR: api.outputDir, LOG_LEVEL: 'silent', WARM_VOICE: 'none' });
      const worker = await openWorker({ ...config, redisUrl: redis.url }, { info: () => {}, warn: () => {}, error: () => {} });
      try {
        expect(await settle(api, good)).toMatchObject({ state: 'succeeded' });
        expect(await settle(api, gone)).toMatchObject({ state: 'failed', error: { code: 'UNKNOWN_LEXICON', field: 'lexicons.1' } });
      } finally {
        await worker.close(1000);
      }
    } finally {
      await api.close();
    }
  }, 60_000);
});

async function settle(t: TestApp, id: string): Promise<JobStatus> {
  for (let polls = 0; polls < 600; polls++) {
    const job = (await t.app.inject({ method: 'GET', url: `/jobs/${id}`, headers: auth('a') })).json<JobStatus>();
    if (job.state !== 'queued' && job.state !== 'running') return job;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`job ${id} did not finish`);
}
