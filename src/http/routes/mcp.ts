import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { AppError } from '../../errors.js';
import { ErrorBody } from '../../api/errors.js';

/**
 * The MCP SDK and the server on it, loaded on the first message rather than at start-up (some 0.3 s of a start,
 * measured, for a door most instances never open).
 */
function loadMcp() {
  return Promise.all([import('@modelcontextprotocol/sdk/server/streamableHttp.js'), import('../mcp/server.js')]);
}
let loading: ReturnType<typeof loadMcp> | undefined;
function mcpModules(): ReturnType<typeof loadMcp> {
  loading ??= loadMcp();
  return loading;
}

/**
 * The MCP server over Streamable HTTP, stateless: each POST gets its own server and transport (the SDK's stateless
 * pattern), answered with JSON. Access is the API's (the key checked before the handler); the tools call the API
 * with the same key and address, so limits, quotas, metrics and job ownership are those of the HTTP requests.
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
      const [{ StreamableHTTPServerTransport }, { createMcpServer, injectedApi }] = await mcpModules();
      const api = injectedApi(app, { authorization: request.headers.authorization, address: request.ip, requestId: request.id });
      const server = createMcpServer({ api, baseUrl: `${request.protocol}://${request.host}` }, request.log);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      reply.raw.once('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      // The transport writes the answer itself; Fastify's onSend hooks will not run, so their headers are set here.
      reply.hijack();
      reply.raw.setHeader('x-request-id', request.id);
      reply.raw.setHeader('x-content-type-options', 'nosniff');
      await transport.handleRequest(request.raw, reply.raw, request.body);
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
