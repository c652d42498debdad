import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, ErrorTable, isAppError, type ErrorCode } from '../../errors.js';
import type { ErrorBody } from '../schemas.js';

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
  else if (issue.keyword === 'minLength' || issue.keyword === 'pattern') message = `${subject} must not be empty or blank.`;
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

/** An error handler that logs, sets the status and Retry-After, and answers with the body `toBody` makes. */
export function errorResponder(toBody: (error: AppError, request: FastifyRequest, thrown: unknown) => unknown) {
  return (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(error);
    if (appError.statusCode >= 500) {
      request.log.error({ err: error, code: appError.code }, 'request failed');
    } else {
      request.log.info({ code: appError.code, field: appError.field }, appError.message);
    }
    // 5xx text is ours, never the cause's: internals stay in the log.
    const shown = appError.code === 'INTERNAL_ERROR' ? new AppError('INTERNAL_ERROR') : appError;
    if (appError.retryAfter !== undefined) reply.header('retry-after', String(appError.retryAfter));
    return reply.code(appError.statusCode).send(toBody(shown, request, error));
  };
}

export function notFoundError(request: FastifyRequest): AppError {
  return new AppError('NOT_FOUND', { message: `${ErrorTable.NOT_FOUND.message} (${request.method} ${(request.url.split('?')[0] ?? '').slice(0, 200)})` });
}

async function errorHandlerPlugin(app: FastifyInstance): Promise<void> {
  app.setErrorHandler(errorResponder((error, request) => errorBody(error, request.id)));
  app.setNotFoundHandler((request, reply) => reply.code(404).send(errorBody(notFoundError(request), request.id)));
}

export default fp(errorHandlerPlugin, { name: 'error-handler' });
