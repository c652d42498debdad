import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { AppError } from '../../errors.js';
import { LEXICON_LIMITS, type StoredLexicon } from '../../usecases/vocabulary.js';
import { ErrorBody } from '../../api/errors.js';
import { LEXICON_MEDIA_TYPES, LexiconList, LexiconParams, LexiconResponse, LexiconUpload } from '../../api/lexicons.js';
import { clientId } from '../job-client.js';

const PLS_TYPE = 'application/pls+xml';

function described(lexicon: StoredLexicon) {
  const { id, language, alphabet, lexemes, bytes, created } = lexicon;
  return { id, language, alphabet, lexemes, bytes, created_at: created };
}

/** Whether the client asks for the document itself (Accept names PLS's type, and JSON not before it). */
function wantsDocument(accept: string | undefined): boolean {
  const types = (accept ?? '').split(',').map((part) => part.split(';')[0]?.trim().toLowerCase());
  const pls = types.indexOf(PLS_TYPE);
  const json = types.indexOf('application/json');
  return pls !== -1 && (json === -1 || pls < json);
}

const lexiconsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Here only (this plugin's context): every other route keeps answering XML bodies with 415.
  app.addContentTypeParser([...LEXICON_MEDIA_TYPES], { parseAs: 'string', bodyLimit: LEXICON_LIMITS.bytes }, (_request, body, done) => done(null, body));

  const notFound = () => new AppError('LEXICON_NOT_FOUND');

  app.post(
    '/lexicons',
    {
      schema: {
        tags: ['lexicons'],
        summary: 'Upload a pronunciation lexicon (W3C PLS 1.0), to name by its id in `lexicons` of later requests',
        consumes: [...LEXICON_MEDIA_TYPES],
        body: LexiconUpload,
        response: { 201: LexiconResponse, '4xx': ErrorBody, '5xx': ErrorBody },
      },
      onRequest: async (request) => {
        const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
        if (!(LEXICON_MEDIA_TYPES as readonly string[]).includes(type)) {
          throw new AppError('UNSUPPORTED_MEDIA_TYPE', { message: `Send the lexicon as ${LEXICON_MEDIA_TYPES.join(', ')}.` });
        }
      },
    },
    async (request, reply) => {
      const lexicon = await app.lexicons.create(request.body, clientId(request));
      request.log.info({ lexicon: lexicon.id, lexemes: lexicon.lexemes, bytes: lexicon.bytes }, 'lexicon stored');
      return reply.code(201).send({ status: 'success', ...described(lexicon) });
    },
  );

  app.get(
    '/lexicons',
    {
      schema: {
        tags: ['lexicons'],
        summary: 'Your pronunciation lexicons',
        response: { 200: LexiconList, '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request) => ({ status: 'success' as const, lexicons: (await app.lexicons.list(clientId(request))).map(described) }),
  );

  app.get(
    '/lexicons/:id',
    {
      schema: {
        tags: ['lexicons'],
        summary: 'What a lexicon is; with `Accept: application/pls+xml`, the document itself',
        params: LexiconParams,
        response: {
          200: {
            content: {
              'application/json': { schema: LexiconResponse },
              [PLS_TYPE]: { schema: Type.String({ description: 'The document as it was uploaded.' }) },
            },
          },
          '4xx': ErrorBody,
          '5xx': ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const owner = clientId(request);
      if (wantsDocument(request.headers.accept)) {
        const document = await app.lexicons.document(request.params.id, owner);
        if (document === undefined) throw notFound();
        return reply.type(`${PLS_TYPE}; charset=utf-8`).send(document);
      }
      const lexicon = await app.lexicons.get(request.params.id, owner);
      if (!lexicon) throw notFound();
      return reply.type('application/json; charset=utf-8').send({ status: 'success', ...described(lexicon) });
    },
  );

  app.delete(
    '/lexicons/:id',
    {
      schema: {
        tags: ['lexicons'],
        summary: 'Delete a lexicon now; requests that name it are refused from then on',
        params: LexiconParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request, reply) => {
      if (!(await app.lexicons.delete(request.params.id, clientId(request)))) throw notFound();
      request.log.info({ lexicon: request.params.id }, 'lexicon deleted');
      return reply.code(204).send(null);
    },
  );
};

export default lexiconsRoutes;
