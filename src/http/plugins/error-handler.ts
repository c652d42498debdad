import { randomUUID } from 'node:crypto';
import { STATUS_CODES as REASON_PHRASES, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { OPENAI_PREFIX } from '../../config.js';
import { AppError, ErrorTable, isAppError, type ErrorCode } from '../../errors.js';
import { elevenLabsErrorBody } from '../elevenlabs-compat.js';
import { openAiErrorBody } from '../openai-compat.js';
import type { ErrorBody } from '../../api/errors.js';
import type { ElevenLabsErrorBody } from '../../api/elevenlabs.js';
import type { OpenAiErrorBody } from '../../api/openai.js';

/** Fastify's own error codes, translated into ours. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'VALIDATION_ERROR',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_ERR_RATE_LIMIT_EXCEEDED: 'RATE_LIMITED',
};

/** Plugins' own 4xx errors (file serving, rate limits), by status; a forbidden path is just not found. */
const STATUS_CODES: Record<number, ErrorCode> = {
  403: 'NOT_FOUND',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  416: 'RANGE_NOT_SATISFIABLE',
  429: 'RATE_LIMITED',
};

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Turns whatever was thrown into an AppError; anything unforeseen becomes INTERNAL_ERROR. */
export function toAppError(error: unknown): AppError {
  if (isAppError(error)) return error;
  const fastifyError = error as Partial<FastifyError> & { validation?: ValidationIssue[] };
  if (fastifyError.validation?.length) return fromValidation(fastifyError.validation[0] as ValidationIssue);
  const mapped = fastifyError.code ? FASTIFY_CODES[fastifyError.code] : undefined;
  if (mapped) return new AppError(mapped, { cause: error, message: mapped === 'INVALID_JSON' ? invalidJsonMessage(fastifyError) : undefined });
  if (error instanceof SyntaxError || (fastifyError.statusCode === 400 && /prototype|JSON/i.test(fastifyError.message ?? ''))) {
    return new AppError('INVALID_JSON', { cause: error, message: invalidJsonMessage(fastifyError) });
  }
  const byStatus = fastifyError.statusCode === undefined ? undefined : STATUS_CODES[fastifyError.statusCode];
  if (byStatus) return new AppError(byStatus, { cause: error });
  if (fastifyError.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) return new AppError('BAD_REQUEST', { cause: error });
  return new AppError('INTERNAL_ERROR', { cause: error });
}

function invalidJsonMessage(error: Partial<FastifyError>): string {
  return error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
    ? 'The request body is empty; send a JSON object.'
    : `The request body is not valid JSON: ${error.message ?? ''}`.trim();
}

/** The pattern of fields that must hold more than white space (api/fields.ts). */
const BLANK_PATTERN = '\\S';

function fromValidation(issue: ValidationIssue): AppError {
  const path = issue.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const missing = typeof issue.params.missingProperty === 'string' ? issue.params.missingProperty : undefined;
  const extra = typeof issue.params.additionalProperty === 'string' ? issue.params.additionalProperty : undefined;
  const field = [path, missing ?? extra].filter(Boolean).join('.') || undefined;
  const subject = field ?? 'body';
  let message: string;
  if (missing) message = `${subject} is required.`;
  else if (extra) message = `${subject} is not a known field.`;
  else if (issue.keyword === 'maxLength') message = `${subject} must be at most ${String(issue.params.limit)} characters.`;
  else if (issue.keyword === 'minLength' || (issue.keyword === 'pattern' && issue.params.pattern === BLANK_PATTERN)) message = `${subject} must not be empty or blank.`;
  else if (issue.keyword === 'pattern') message = `${subject} is malformed (it must match ${String(issue.params.pattern)}), so nothing has it.`;
  else if (issue.keyword === 'anyOf' || issue.keyword === 'enum' || issue.keyword === 'const') message = `${subject} has an unsupported value.`;
  else message = `${subject} ${issue.message ?? 'is invalid'}.`;
  return new AppError('VALIDATION_ERROR', { field, message });
}

export function errorBody(error: AppError, requestId: string): ErrorBody {
  return {
    status: 'error',
    error: { code: error.code, message: error.message, ...(error.field ? { field: error.field } : {}), requestId },
  };
}

/** The routes under the shared /v1 prefix that are ElevenLabs' (routes/elevenlabs.ts). */
const ELEVENLABS_ROUTES = /^\/(?:text-to-speech|voices)(?:[/?#]|$)/;

/** Under the /v1 prefix errors have OpenAI's body, or ElevenLabs' on its routes; elsewhere ours. */
export function errorBodyFor(url: string, error: AppError, requestId: string, thrown?: unknown): ErrorBody | OpenAiErrorBody | ElevenLabsErrorBody {
  const rest = url.slice(OPENAI_PREFIX.length);
  if (!url.startsWith(OPENAI_PREFIX) || !/^(?:[/?#]|$)/.test(rest)) return errorBody(error, requestId);
  return ELEVENLABS_ROUTES.test(rest) ? elevenLabsErrorBody(error, thrown) : openAiErrorBody(error, thrown);
}

/**
 * Answers with a 5xx that are the caller's limits or a passing state of the service, not a fault: logged at warn,
 * as a 4xx is at info; any other 5xx at error, with its cause.
 */
const EXPECTED_5XX: ReadonlySet<ErrorCode> = new Set(['ASSET_QUOTA_EXCEEDED', 'LEXICON_QUOTA_EXCEEDED', 'STORAGE_FULL', 'SHUTTING_DOWN', 'OVERLOADED']);

export function logLevelOf(error: AppError): 'info' | 'warn' | 'error' {
  if (error.statusCode < 500) return 'info';
  return EXPECTED_5XX.has(error.code) ? 'warn' : 'error';
}

/**
 * An error handler that logs, sets the status and Retry-After, and answers with the body `toBody` makes; `statusOf`
 * gives the status where a compatible API answers another than ours.
 */
export function errorResponder(toBody: (error: AppError, request: FastifyRequest, thrown: unknown) => unknown, statusOf?: (error: AppError) => number) {
  return (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(error);
    const level = logLevelOf(appError);
    if (level === 'error') {
      request.log.error({ err: error, code: appError.code }, 'request failed');
    } else {
      // A passing 5xx (OVERLOADED, STORAGE_FULL…) names what it met, so a 503 in the log says which dependency was slow.
      const cause = appError.cause instanceof Error ? { cause: appError.cause.message } : {};
      request.log[level]({ code: appError.code, field: appError.field, ...cause }, appError.message);
    }
    // 5xx text is ours, never the cause's: internals stay in the log.
    const shown = appError.code === 'INTERNAL_ERROR' ? new AppError('INTERNAL_ERROR') : appError;
    if (appError.retryAfter !== undefined) reply.header('retry-after', String(appError.retryAfter));
    const contentRange = contentRangeOf(error);
    if (contentRange !== undefined) reply.header('content-range', contentRange);
    return reply.code(statusOf?.(appError) ?? appError.statusCode).send(toBody(shown, request, error));
  };
}

/** A 416 from file serving carries the file's size in a Content-Range header among its error's headers (RFC 9110 §15.5.17). */
function contentRangeOf(error: unknown): string | undefined {
  const headers = (error as { headers?: Record<string, unknown> } | undefined)?.headers;
  const value = headers && Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-range')?.[1];
  return typeof value === 'string' ? value : undefined;
}

/** Messages for the errors Fastify raises before routing. */
const FRAMEWORK_MESSAGES: Record<string, string> = {
  FST_ERR_BAD_URL: 'The URL is malformed (an invalid percent-encoding).',
  FST_ERR_MAX_PARAM_LENGTH: 'A URL segment is too long.',
};

const answerFrameworkError = errorResponder((error, request, thrown) => errorBodyFor(request.url, error, request.id, thrown));

/** Fastify's `frameworkErrors`: errors raised before routing (a malformed URL) get the documented body too. */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const message = FRAMEWORK_MESSAGES[error.code];
  // No route, so no onSend hook adds the id.
  reply.header('x-request-id', request.id);
  answerFrameworkError(message ? new AppError('BAD_REQUEST', { message, cause: error }) : error, request, reply);
}

/** An answer written by the HTTP server itself, outside Fastify: the documented body, a request id, and the connection closed. */
export function rawErrorResponse(error: AppError, url: string, requestId: string): { status: number; headers: OutgoingHttpHeaders; body: string } {
  const body = JSON.stringify(errorBodyFor(url, error, requestId));
  return {
    status: error.statusCode,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'x-request-id': requestId,
      ...(error.retryAfter === undefined ? {} : { 'retry-after': String(error.retryAfter) }),
      connection: 'close',
    },
    body,
  };
}

/** Writes a raw error response on a socket no request was parsed from (or none Fastify has answered), then closes it. */
export function writeRawError(socket: Duplex, error: AppError, url: string, requestId: string): void {
  const { status, headers, body } = rawErrorResponse(error, url, requestId);
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${String(value)}\r\n`);
  if (socket.writable) socket.write(`HTTP/1.1 ${status} ${REASON_PHRASES[status] ?? ''}\r\n${head.join('')}\r\n${body}`);
  socket.destroy();
}

interface ClientError extends Error {
  code?: string;
  reason?: string;
  rawPacket?: unknown;
}

/** Node's errors for a request it could not parse, or not receive in time. */
function fromClientError(error: ClientError): AppError {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new AppError('REQUEST_TIMEOUT', { cause: error });
  if (error.code === 'HPE_HEADER_OVERFLOW') return new AppError('HEADERS_TOO_LARGE', { cause: error });
  const reason = error.reason ? ` (${error.reason.slice(0, 100)})` : '';
  return new AppError('BAD_REQUEST', { message: `The request is not valid HTTP/1.1${reason}.`, cause: error });
}

/** The request target of an unparsable request's first line, when it has one. */
function requestTarget(rawPacket: unknown): string {
  if (!Buffer.isBuffer(rawPacket)) return '';
  return /^[A-Z]+ (\S+)/.exec(rawPacket.toString('latin1', 0, 8192))?.[1] ?? '';
}

/**
 * The server's 'clientError' listener (Fastify's `clientErrorHandler`): a request Node could not parse (bad
 * Content-Length, Content-Length with Transfer-Encoding, a control character in a header), headers too large, or a
 * request not received within its timeout, answered in the documented body instead of Node's own.
 */
export function clientErrorHandler(this: FastifyInstance, error: ClientError, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const appError = fromClientError(error);
  const requestId = randomUUID();
  // A request cut off while its body arrives has a response object; once that has begun, nothing more can be written.
  const pending = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;
  const url = pending?.req.url ?? requestTarget(error.rawPacket);
  this.log.info({ reqId: requestId, code: appError.code, reason: error.code, url: url.slice(0, 200) }, appError.message);
  if (pending?.headersSent) socket.destroy();
  else writeRawError(socket, appError, url, requestId);
}

export function notFoundError(request: FastifyRequest): AppError {
  return new AppError('NOT_FOUND', { message: `${ErrorTable.NOT_FOUND.message} (${request.method} ${(request.url.split('?')[0] ?? '').slice(0, 200)})` });
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

async function errorHandlerPlugin(app: FastifyInstance): Promise<void> {
  app.setErrorHandler(errorResponder((error, request) => errorBody(error, request.id)));
  app.setNotFoundHandler((request, reply) => {
    // A route that exists for other methods: 405 with the ones it takes (RFC 9110 §15.5.6), not "no such route".
    const url = request.url.split('?')[0] ?? '';
    const routed = app.findRoute({ method: request.method, url }) !== null;
    const allowed = routed ? [] : METHODS.filter((method) => app.findRoute({ method, url }) !== null);
    if (allowed.length === 0) return reply.code(404).send(errorBody(notFoundError(request), request.id));
    const error = new AppError('METHOD_NOT_ALLOWED', { message: `${ErrorTable.METHOD_NOT_ALLOWED.message} (${request.method}; it takes ${allowed.join(', ')})` });
    request.log.info({ code: error.code }, error.message);
    return reply.code(405).header('allow', allowed.join(', ')).send(errorBody(error, request.id));
  });
}

export default fp(errorHandlerPlugin, { name: 'error-handler' });
