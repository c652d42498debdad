// Issue 36, finding 8: MCP takes the key headers HTTP takes and calls its tools as that caller (its tenant), a wrong
// key beside a right one is not a refused key, and the transport's refusals come in the API's error body.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../src/api/errors.js';
import type { LexiconResponse } from '../../src/api/lexicons.js';
import { useTestApp } from '../helpers/helpers.js';

const KEYS = { a: 'mcp-access-key-a', b: 'mcp-access-key-b' } as const;
const VOICE = 'espeak-ng:en-us';
const LEXICON = `<?xml version="1.0" encoding="UTF-8"?>
<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="en-US">
  <lexeme><grapheme>voxreel</grapheme><alias>vox reel</alias></lexeme>
</lexicon>
`;
const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
const JSON_AND_SSE = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function text(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

describe('MCP callers (issue 36, finding 8)', () => {
  // Three refused keys from an address block it: the tool calls of a caller with a good key must never count.
  const t = useTestApp({ API_KEYS: `${KEYS.a},${KEYS.b}`, AUTH_FAILURE_LIMIT: '3' });
  let endpoint: URL;
  const clients: Client[] = [];

  async function connect(headers: Record<string, string>): Promise<Client> {
    const client = new Client({ name: 'voxreel-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } }));
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as { port: number };
    endpoint = new URL(`http://127.0.0.1:${port}/mcp`);
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
  });

  it('takes xi-api-key and x-api-key, and its tools run as that key: its lexicons, not the other key’s', async () => {
    const uploaded = await t.app.inject({ method: 'POST', url: '/lexicons', payload: LEXICON, headers: { authorization: `Bearer ${KEYS.a}`, 'content-type': 'application/pls+xml' } });
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    const lexicon = uploaded.json<LexiconResponse>().id;
    const owner = await connect({ 'xi-api-key': KEYS.a });
    // More tool calls than AUTH_FAILURE_LIMIT: each was UNAUTHORIZED and a refused key before.
    for (let call = 0; call < 5; call += 1) {
      const listed = (await owner.callTool({ name: 'list_voices', arguments: { language: 'en' } })) as CallToolResult;
      expect(listed.isError, text(listed)).toBeFalsy();
    }
    const spoken = (await owner.callTool({ name: 'speak', arguments: { text: 'voxreel', voice: VOICE, format: 'wav', lexicons: [lexicon] } })) as CallToolResult;
    expect(spoken.isError, text(spoken)).toBeFalsy();
    expect((spoken.structuredContent as { words: Array<{ word: string }> }).words.length).toBeGreaterThan(0);

    const other = await connect({ 'x-api-key': KEYS.b });
    const refused = (await other.callTool({ name: 'speak', arguments: { text: 'voxreel', voice: VOICE, lexicons: [lexicon] } })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^UNKNOWN_LEXICON/);
    // The address was never blocked.
    const after = await t.app.inject({ method: 'GET', url: '/voices', headers: { 'xi-api-key': KEYS.a } });
    expect(after.statusCode).toBe(200);
  });

  it('a wrong key in one header beside a valid one in another is let in and not counted as refused', async () => {
    const mixed = await connect({ authorization: 'Bearer not-a-key', 'xi-api-key': KEYS.b });
    for (let call = 0; call < 5; call += 1) {
      const listed = (await mixed.callTool({ name: 'list_voices', arguments: {} })) as CallToolResult;
      expect(listed.isError, text(listed)).toBeFalsy();
    }
    for (let call = 0; call < 5; call += 1) {
      const response = await t.app.inject({ method: 'GET', url: '/voices', headers: { authorization: 'Bearer not-a-key', 'x-api-key': KEYS.a } });
      expect(response.statusCode).toBe(200);
    }
    expect((await t.app.inject({ method: 'GET', url: '/voices', headers: { authorization: `Bearer ${KEYS.a}` } })).statusCode).toBe(200);
  });

  it("answers the transport's refusals with the documented error body, not JSON-RPC", async () => {
    const post = (headers: Record<string, string>, body: unknown) => fetch(endpoint, { method: 'POST', headers: { 'xi-api-key': KEYS.a, ...headers }, body: JSON.stringify(body) });
    const cases = [
      { headers: { ...JSON_AND_SSE, accept: 'application/json' }, body: INITIALIZE, status: 406, code: 'NOT_ACCEPTABLE', message: /text\/event-stream/ },
      { headers: JSON_AND_SSE, body: { hello: 'world' }, status: 400, code: 'BAD_REQUEST', message: /JSON-RPC/ },
      { headers: JSON_AND_SSE, body: Array.from({ length: 200 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'ping' })), status: 400, code: 'BAD_REQUEST', message: /Batch/ },
    ];
    for (const { headers, body, status, code, message } of cases) {
      const response = await post(headers, body);
      const answer = (await response.json()) as ErrorBody;
      expect(response.status, JSON.stringify(answer)).toBe(status);
      expect(answer).toEqual({ status: 'error', error: { code, message: expect.stringMatching(message), requestId: expect.any(String) } });
      expect(response.headers.get('x-request-id')).toBe(answer.error.requestId);
    }
  });
});
