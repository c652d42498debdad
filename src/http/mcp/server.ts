import type { FastifyInstance } from 'fastify';
// The low-level Server, not McpServer: McpServer takes zod schemas, and the tools' schemas are the API's own TypeBox
// ones (JSON Schema already), validated once, by the routes the tools call.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode as McpErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { version } from '../../version.js';
import { ServiceError, TOOLS, voicesResource, type ServiceApi, type ToolContext } from './tools.js';

export type { ServiceApi } from './tools.js';

const VOICES_URI = 'voxreel://voices';
const VOICE_URI = /^voxreel:\/\/voices\/(.+)$/;

const INSTRUCTIONS =
  'voxreel speaks text with local voices. list_voices finds a voice; speak makes an audio file with word timings; ' +
  'make_video starts a narrated video with captions and returns a job id to poll with get_job. Files are given as URLs.';

/** Who an MCP client is to the API: its key headers (as it sent them), its address, and the id its log lines carry. */
export interface Caller {
  keyHeaders?: Record<string, string>;
  address?: string;
  requestId?: string;
}

/** The API answered in-process, as `caller`: `inject` runs the routes, hooks and limits a request from outside would. */
export function injectedApi(app: FastifyInstance, caller: Caller): ServiceApi {
  const headers = {
    ...caller.keyHeaders,
    ...(caller.requestId === undefined ? {} : { 'x-request-id': caller.requestId }),
  };
  return async ({ method, url, body }) => {
    const response = await app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: body }), ...(caller.address ? { remoteAddress: caller.address } : {}) });
    return { status: response.statusCode, body: response.body === '' ? undefined : (JSON.parse(response.body) as unknown) };
  };
}

function toolError(code: string, message: string, field?: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `${code}: ${message}${field ? ` (field: ${field})` : ''}` }] };
}

/**
 * An MCP server whose tools and resources are the HTTP API's operations (docs/api.md, MCP). The service's errors
 * are tool errors (`isError`, with the service's code), never protocol failures.
 */
export function createMcpServer(context: ToolContext, log: FastifyInstance['log']): Server {
  const server = new Server({ name: 'voxreel', version }, { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map(({ name, title, description, inputSchema, outputSchema }) => ({
      name,
      title,
      description,
      inputSchema,
      outputSchema,
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = TOOLS.find((candidate) => candidate.name === request.params.name);
    if (!tool) throw new McpError(McpErrorCode.InvalidParams, `Unknown tool: ${request.params.name.slice(0, 100)}`);
    try {
      const { structured, text } = await tool.run(request.params.arguments ?? {}, context);
      return { content: [{ type: 'text', text }], structuredContent: structured };
    } catch (error) {
      if (error instanceof ServiceError) return toolError(error.error.code, error.error.message, error.error.field);
      log.error({ err: error, tool: tool.name }, 'an MCP tool failed');
      return toolError('INTERNAL_ERROR', 'An unexpected error occurred.');
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: [{ uri: VOICES_URI, name: 'voices', title: 'Voices', description: 'Every voice installed: id, name, language, gender, engine, recommended.', mimeType: 'application/json' }],
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [{ uriTemplate: `${VOICES_URI}/{id}`, name: 'voice', title: 'One voice', description: 'A voice by its id.', mimeType: 'application/json' }],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    const id = VOICE_URI.exec(uri)?.[1];
    if (uri !== VOICES_URI && id === undefined) throw new McpError(McpErrorCode.InvalidParams, `No resource has the URI ${uri.slice(0, 200)}`);
    const voices = await voicesResource(context.api).catch((error: unknown) => {
      throw error instanceof ServiceError ? new McpError(McpErrorCode.InternalError, `${error.error.code}: ${error.message}`) : error;
    });
    const wanted = id === undefined ? voices : voices.find((voice) => voice.id === decodeURIComponent(id));
    if (wanted === undefined) throw new McpError(McpErrorCode.InvalidParams, `No voice has the id ${id?.slice(0, 100) ?? ''}`);
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(wanted) }] };
  });
  return server;
}
