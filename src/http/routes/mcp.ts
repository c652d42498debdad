import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { AppError, type ErrorCode } from '../../errors.js';
import { keyHeadersOf } from '../plugins/access.js';
import { ErrorBody } from '../../api/errors.js';

/**
 * The MCP SDK and the server on it, loaded on the first message rather than at start-up (some 0.3 s of a start,
 * measured, for a door most instances never open).
 */
function loadMcp() {
  return Promise.all([import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'), import('../mcp/server.js')]);
}
let loading: ReturnType<typeof loadMcp> | undefined;
function mcpModules(): ReturnType<typeof loadMcp> {
  loading ??= loadMcp();
  return loading;
}

/** The request headers the transport reads (the body it is given parsed). */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id'];

function transportRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const name of TRANSPORT_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  return new Request('http://localhost/mcp', { method: 'POST', headers });
}

/** Codes for the transport's refusals, by status; its JSON-RPC body (id null) becomes the API's error body. */
const TRANSPORT_CODES: Record<number, ErrorCode> = { 406: 'NOT_ACCEPTABLE', 413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE' };

async function transportError(answer: Response): Promise<AppError> {
  const said = await answer.json().then(
    (body: unknown) => (body as { error?: { message?: unknown } } | null)?.error?.message,
    () => undefined,
  );
  const code = TRANSPORT_CODES[answer.status] ?? (answer.status >= 500 ? 'INTERNAL_ERROR' : 'BAD_REQUEST');
  return new AppError(code, typeof said === 'string' ? { message: `MCP: ${said.slice(0, 300)}.` } : {});
}

/**
 * The MCP server over Streamable HTTP, stateless: each POST gets its own server and transport (the SDK's stateless
 * pattern), answered with JSON. Access is the API's (the key checked before the handler); the tools call the API
 * with the key headers the message came with and its address, so limits, quotas, metrics and job ownership are those
 * of the HTTP requests. The transport's refusals (Accept, a message that is not JSON-RPC, a batch too large) are
 * answered with the API's error body, as everything else is.
 */
const mcpRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/mcp',
    {
      schema: {
        tags: ['mcp'],
        summary: 'Model Context Protocol (Streamable HTTP, stateless) for AI agents: list_voices, speak, make_video, get_job (docs/api.md, MCP)',
        body: Type.Unknown({ description: 'A JSON-RPC 2.0 message of MCP.' }),
        response: { 200: Type.Unknown({ description: 'The JSON-RPC answer.' }), '4xx': ErrorBody, '5xx': ErrorBody },
      },
      // Each tool call is counted as the API request it makes; the protocol's own messages cost nothing to answer.
      config: { rateLimit: false },
    },
    async (request, reply) => {
      const [{ WebStandardStreamableHTTPServerTransport }, { createMcpServer, injectedApi }] = await mcpModules();
      const api = injectedApi(app, { keyHeaders: keyHeadersOf(request), address: request.ip, requestId: request.id });
      const server = createMcpServer({ api, baseUrl: `${request.protocol}://${request.host}` }, request.log);
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      reply.raw.once('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      const answer = await transport.handleRequest(transportRequest(request), { parsedBody: request.body });
      if (answer.status >= 400) throw await transportError(answer);
      const contentType = answer.headers.get('content-type');
      if (contentType) reply.type(contentType);
      // JSON already: sent as it is, not serialized again.
      return reply.code(answer.status).send(Buffer.from(await answer.arrayBuffer()));
    },
  );

  // Stateless: there is no session to stream server messages on or to end.
  const notAllowed = async (): Promise<never> => {
    throw new AppError('METHOD_NOT_ALLOWED', { message: 'This MCP endpoint is stateless: send messages with POST.' });
  };
  // A client asks once per connection (for a stream of server messages), and is told no: not worth a request of its limit.
  const refused = { schema: { tags: ['mcp'], summary: 'Not used: the MCP endpoint is stateless (405)', response: { '4xx': ErrorBody } }, config: { rateLimit: false as const } };
  app.get('/mcp', refused, async (_request, reply) => {
    reply.header('allow', 'POST');
    return notAllowed();
  });
  app.delete('/mcp', refused, async (_request, reply) => {
    reply.header('allow', 'POST');
    return notAllowed();
  });
};

export default mcpRoutes;
