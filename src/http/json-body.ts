import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

/**
 * JSON bodies as Fastify parses them (`__proto__` and `constructor.prototype` keys refused: prototype poisoning),
 * with a message that says which of the two went wrong: Fastify's own calls both "not valid JSON".
 */
export function parseJsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parse(request, String(body), (error, value) => {
      if (error === null || (error as { code?: string }).code !== 'FST_ERR_CTP_INVALID_JSON_BODY') return done(error, value);
      done(invalidJson(String(body), error), undefined);
    });
  });
}

function invalidJson(body: string, cause: Error): AppError {
  try {
    JSON.parse(body);
  } catch (syntax) {
    const detail = syntax instanceof Error ? syntax.message.slice(0, 200) : '';
    return new AppError('INVALID_JSON', { message: `The request body is not valid JSON: ${detail}`, cause });
  }
  return new AppError('INVALID_JSON', {
    message: 'The request body is JSON with a "__proto__" or "constructor": { "prototype" } key, which is refused (prototype poisoning): leave it out.',
    cause,
  });
}
