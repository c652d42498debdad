import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, useTestApp } from '../helpers/helpers.js';
import { probe } from '../helpers/media.js';

const VOICE = 'espeak-ng:en-us';
const SENTENCE = 'The quick brown fox jumps over the lazy dog, then rests in the warm afternoon sun.';

interface SpokenFile {
  url: string;
  duration: number;
  voice: string;
  words: Array<{ word: string; start: number; end: number }>;
}

/** The words as written, in order, covering the text (an engine may time 'in the' as one). */
function expectWordsOf(sentence: string, words: SpokenFile['words']): void {
  let offset = 0;
  for (const { word } of words) {
    const at = sentence.indexOf(word, offset);
    expect(at, word).toBeGreaterThanOrEqual(offset);
    expect(sentence.slice(offset, at).trim()).toMatch(/^[,.]?$/);
    offset = at + word.length;
  }
  expect(sentence.slice(offset).trim()).toMatch(/^[,.]?$/);
}

function resourceText(content: { uri: string; text: string } | { uri: string; blob: string } | undefined): string {
  if (content === undefined || !('text' in content)) throw new Error(`not a text resource: ${JSON.stringify(content)}`);
  return content.text;
}

function text(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

async function called(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** A tool call that must succeed: its structured content. */
async function succeeded<T>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const result = await called(client, name, args);
  expect(result.isError, text(result)).toBeFalsy();
  return result.structuredContent as T;
}

describe('MCP over Streamable HTTP (/mcp)', () => {
  const t = useTestApp({ API_KEYS: 'mcp-key-1,mcp-key-2' });
  let endpoint: URL;
  const clients: Client[] = [];

  async function connect(key: string): Promise<Client> {
    const client = new Client({ name: 'voxreel-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    clients.push(client);
    return client;
  }

  /** A published file, fetched back through the app into OUTPUT_DIR, decoded. */
  async function probed(url: string, extension: string) {
    const { statusCode, body } = await t.fetchFile(url);
    expect(statusCode).toBe(200);
    const file = path.join(t.outputDir, `received-${clients.length}-${Date.now()}.${extension}`);
    await writeFile(file, body);
    return probe(file);
  }

  let client: Client;
  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as { port: number };
    endpoint = new URL(`http://127.0.0.1:${port}/mcp`);
    client = await connect('mcp-key-1');
  });
  afterAll(async () => {
    await Promise.all(clients.map((each) => each.close()));
  });

  it('initializes and lists the four tools with input schemas and descriptions', async () => {
    expect(client.getServerVersion()?.name).toBe('voxreel');
    expect(client.getInstructions()).toMatch(/get_job/);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['get_job', 'list_voices', 'make_video', 'speak']);
    for (const tool of tools) {
      expect(tool.description?.length).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
    }
    const speak = tools.find((tool) => tool.name === 'speak');
    expect(Object.keys(speak?.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['text', 'segments', 'voice', 'format', 'speed']));
    // Text, chapters or a dialogue's segments: one of them, which the API checks.
    expect(speak?.inputSchema.required).toBeUndefined();
    const video = tools.find((tool) => tool.name === 'make_video');
    expect(Object.keys(video?.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['resolution', 'aspect_ratio', 'subtitles', 'caption_style']));
  });

  it('list_voices filters by language and marks the recommended voices', async () => {
    const { voices } = await succeeded<{ voices: Array<{ id: string; language: string; engine: string; recommended: boolean; gender: unknown }> }>(client, 'list_voices', {
      language: 'en',
    });
    expect(voices.map((voice) => voice.id)).toContain(VOICE);
    expect(voices.every((voice) => voice.language.toLowerCase().startsWith('en'))).toBe(true);
    expect(voices.some((voice) => voice.recommended)).toBe(true);
    expect(voices.find((voice) => voice.id === VOICE)).toMatchObject({ engine: 'espeak-ng', recommended: expect.any(Boolean) });
    const all = await succeeded<{ voices: unknown[] }>(client, 'list_voices', {});
    expect(all.voices.length).toBeGreaterThan(voices.length);
  });

  it('speak makes a file that decodes, with every word timed', async () => {
    const result = await called(client, 'speak', { text: SENTENCE, voice: VOICE, format: 'wav', speed: 1.25 });
    expect(result.isError, text(result)).toBeFalsy();
    const spoken = result.structuredContent as unknown as SpokenFile;
    expect(text(result)).toContain(spoken.url);
    expect(spoken.voice).toBe(VOICE);
    expect(spoken.url).toMatch(/\/audio\/[^/]+\.wav$/);
    const info = await probed(spoken.url, 'wav');
    expect(info.duration).toBeGreaterThan(1);
    expect(Math.abs(info.duration - spoken.duration)).toBeLessThan(0.1);
    expectWordsOf(SENTENCE, spoken.words);
    for (const [index, word] of spoken.words.entries()) {
      expect(word.end).toBeGreaterThan(word.start);
      expect(word.start).toBeGreaterThanOrEqual(spoken.words[index - 1]?.end ?? 0);
    }
    expect(spoken.words.at(-1)?.end).toBeLessThanOrEqual(spoken.duration + 0.05);
  });

  it('speak without a voice uses the recommended English voice', async () => {
    const { voices } = await succeeded<{ voices: Array<{ id: string; language: string; recommended: boolean }> }>(client, 'list_voices', { language: 'en-US' });
    const recommended = voices.find((voice) => voice.recommended && voice.language === 'en-US');
    // How to answer is the tool's to say: an `async` slipped in by the agent still gets the file.
    const spoken = await succeeded<SpokenFile>(client, 'speak', { text: 'Hello there.', async: true });
    expect(spoken.voice).toBe(recommended?.id);
    expect(spoken.url).toMatch(/\.mp3$/);
  });

  it('speak takes a dialogue: each turn in its voice, the first turn\'s the answer\'s', async () => {
    const segments = [
      { voice: 'flite:slt', text: 'Is anyone there?' },
      { voice: VOICE, text: 'Only me.' },
    ];
    const spoken = await succeeded<SpokenFile>(client, 'speak', { segments, format: 'wav' });
    expect(spoken.voice).toBe('flite:slt');
    expect(spoken.words.map((word) => word.word)).toEqual(['Is', 'anyone', 'there?', 'Only', 'me.']);
    expect((await probed(spoken.url, 'wav')).duration).toBeGreaterThan(1);
  });

  it("the service's errors are tool errors with its code: an unknown voice, an invalid field", async () => {
    const unknown = await called(client, 'speak', { text: SENTENCE, voice: 'espeak-ng:no-such-voice' });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/^UNKNOWN_VOICE: /);
    const invalid = await called(client, 'speak', { text: SENTENCE, voice: VOICE, speed: 5 });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toMatch(/^VALIDATION_ERROR: .*\(field: speed\)/);
    const missing = await called(client, 'get_job', { id: 'A'.repeat(22) });
    expect(text(missing)).toMatch(/^JOB_NOT_FOUND: /);
  });

  it('make_video answers at once with a job; get_job follows it to the video, and only for its own client', async () => {
    const started = Date.now();
    const accepted = await succeeded<{ id: string; state: string; statusUrl: string; hint: string }>(client, 'make_video', {
      text: 'A short narrated clip.',
      voice: VOICE,
      resolution: '720p',
      aspect_ratio: '9:16',
      caption_style: 'bold',
    });
    expect(accepted.state).toBe('queued');
    expect(accepted.statusUrl).toBe(`${endpoint.origin}/jobs/${accepted.id}`);
    expect(accepted.hint).toMatch(/get_job/);
    expect(Date.now() - started).toBeLessThan(2000);

    // Another key's client is told the job does not exist, as GET /jobs/{id} tells it.
    const other = await connect('mcp-key-2');
    const foreign = await called(other, 'get_job', { id: accepted.id });
    expect(foreign.isError).toBe(true);
    expect(text(foreign)).toMatch(/^JOB_NOT_FOUND: /);

    let job: { state: string; url?: string; result?: { width?: number; height?: number }; progress?: number } = { state: 'queued' };
    const states = new Set<string>();
    while (job.state === 'queued' || job.state === 'running') {
      await new Promise((resolve) => setTimeout(resolve, 200));
      job = await succeeded(client, 'get_job', { id: accepted.id });
      states.add(job.state);
    }
    expect(job.state, JSON.stringify(job)).toBe('succeeded');
    expect(job.result).toMatchObject({ width: 720, height: 1280 });
    const info = await probed(job.url ?? '', 'mp4');
    expect(info.duration).toBeGreaterThan(1);
    expect(info.streams.some((stream) => stream.codecName === 'h264')).toBe(true);
  });

  it('reads the voices resource, and one voice by its URI', async () => {
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toContain('voxreel://voices');
    const { contents } = await client.readResource({ uri: 'voxreel://voices' });
    const voices = JSON.parse(resourceText(contents[0])) as Array<{ id: string }>;
    expect(voices.map((voice) => voice.id)).toContain(VOICE);
    const one = await client.readResource({ uri: `voxreel://voices/${encodeURIComponent(VOICE)}` });
    expect(one.contents[0]?.mimeType).toBe('application/json');
    expect(JSON.parse(resourceText(one.contents[0]))).toMatchObject({ id: VOICE, engine: 'espeak-ng' });
  });

  it('refuses a request without a valid key with 401, as the API does', async () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const anonymous = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify(initialize) });
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    const wrong = await fetch(endpoint, { method: 'POST', headers: { ...headers, authorization: 'Bearer wrong' }, body: JSON.stringify(initialize) });
    expect(wrong.status).toBe(401);
    await expect(connect('wrong-key')).rejects.toThrow();
  });

  it("a tool call counts against the client's rate limit as its API request does; the protocol's own messages do not", async () => {
    const limited = await buildTestApp({ API_KEYS: 'mcp-key-1', RATE_LIMIT_MAX: '2' }, { engines: t.app.engines });
    try {
      await limited.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = limited.app.server.address() as { port: number };
      const own = new Client({ name: 'voxreel-test', version: '1.0.0' });
      await own.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { authorization: 'Bearer mcp-key-1' } } }));
      await own.listTools();
      await succeeded(own, 'list_voices', { language: 'fr' });
      await succeeded(own, 'list_voices', { language: 'de' });
      const third = await called(own, 'list_voices', { language: 'es' });
      expect(third.isError).toBe(true);
      expect(text(third)).toMatch(/^RATE_LIMITED: /);
      await own.close();
    } finally {
      await limited.close();
    }
  });

  it('answers GET and DELETE with 405 (stateless), is in the OpenAPI document, and counts the tool calls in the metrics as API requests', async () => {
    const get = await fetch(endpoint, { headers: { authorization: 'Bearer mcp-key-1', accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const openApi = (await (await fetch(new URL('/docs/json', endpoint))).json()) as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(openApi.paths['/mcp'] ?? {})).toEqual(expect.arrayContaining(['post', 'get', 'delete']));
    const metrics = await (await fetch(new URL('/metrics', endpoint))).text();
    expect(metrics).toMatch(/voxreel_http_requests_total\{route="\/mcp",method="POST",status="200"\} [1-9]/);
    expect(metrics).toMatch(/voxreel_http_requests_total\{route="\/tts",method="POST",status="200"\} [1-9]/);
    expect(metrics).toMatch(/voxreel_http_requests_total\{route="\/tts-video",method="POST",status="202"\} [1-9]/);
  });
});

describe('voxreel mcp (stdio)', () => {
  let outputDir: string;
  let client: Client;
  let stderr = '';

  beforeAll(async () => {
    outputDir = await mkdtemp(path.join(os.tmpdir(), 'voxreel-mcp-'));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', 'src/mcp.ts'],
      env: { ...(process.env as Record<string, string>), OUTPUT_DIR: outputDir, CDN_URL: 'http://files.example', LOG_LEVEL: 'info', WARM_VOICE: 'none' },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    client = new Client({ name: 'voxreel-test', version: '1.0.0' });
    await client.connect(transport);
  }, 60_000);
  afterAll(async () => {
    await client.close();
    await rm(outputDir, { recursive: true, force: true });
  });

  it('lists voices and speaks into OUTPUT_DIR, logging to stderr only', async () => {
    const { voices } = await succeeded<{ voices: Array<{ id: string }> }>(client, 'list_voices', { language: 'en' });
    expect(voices.map((voice) => voice.id)).toContain(VOICE);
    const spoken = await succeeded<SpokenFile>(client, 'speak', { text: SENTENCE, voice: VOICE });
    expect(spoken.url).toMatch(/^http:\/\/files\.example\/audio\/[^/]+\.mp3$/);
    const info = await probe(path.join(outputDir, spoken.url.slice('http://files.example/'.length)));
    expect(info.duration).toBeGreaterThan(1);
    expectWordsOf(SENTENCE, spoken.words);
    // Every log line went to stderr: stdout carried the protocol, which the client parsed without a stray line.
    expect(stderr).toContain('voxreel mcp ready');
  });
});
