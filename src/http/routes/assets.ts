import multipart, { type Multipart } from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Asset, Upload } from '../../assets/store.js';
import { AppError, isAppError } from '../../errors.js';
import { AssetParams, AssetResponse, AssetUpload } from '../../api/assets.js';
import { ErrorBody } from '../../api/errors.js';
import { clientId } from '../job-client.js';

/** The multipart field the file comes in. */
const FILE_FIELD = 'file';
/** Boundaries and part headers around the file: a Content-Length beyond the byte limit plus this is refused unread. */
const MULTIPART_ALLOWANCE = 64 * 1024;

const oneFile = () =>
  new AppError('VALIDATION_ERROR', { field: FILE_FIELD, message: 'Send exactly one file, in the multipart field `file`, and nothing else.' });

/** @fastify/multipart's and busboy's errors, in the API's terms. */
function multipartError(error: unknown): AppError {
  if (isAppError(error)) return error;
  const code = (error as { code?: unknown }).code;
  if (code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_PROTO_VIOLATION') return oneFile();
  if (code === 'FST_MP_PREMATURE_CLOSE') return new AppError('CLIENT_CLOSED', { cause: error });
  if (error instanceof Error && /^Unexpected end of (?:multipart data|form)$/.test(error.message)) {
    return new AppError('BAD_REQUEST', { message: 'The multipart body ends before its closing boundary: the upload was cut short; send it whole.', cause: error });
  }
  const detail = error instanceof Error ? `: ${error.message.slice(0, 100)}` : '';
  return new AppError('BAD_REQUEST', { message: `The multipart body is malformed${detail}.`, cause: error });
}

/**
 * The request's parts, their errors translated. The whole body is counted as it arrives, whatever it carries
 * around the file part (a preamble, an epilogue, refused fields): a body without a length (chunked) past
 * `maxBodyBytes` is cut there, as the file itself is at the byte limit.
 */
async function* partsOf(request: FastifyRequest, maxBodyBytes: number): AsyncGenerator<Multipart> {
  const parts = request.parts();
  // The first step starts the parser, which pipes the body into itself: listening from then on reads nothing early.
  let pending = parts.next();
  let received = 0;
  let cutOff: (error: AppError) => void = () => undefined;
  const cut = new Promise<never>((_, reject) => (cutOff = reject));
  cut.catch(() => undefined);
  const count = (chunk: Buffer) => {
    received += chunk.length;
    if (received <= maxBodyBytes) return;
    // Past the limit outside the file part (a preamble, an epilogue): the parser gets no more, and the answer closes the connection.
    request.raw.off('data', count);
    request.raw.unpipe();
    cutOff(new AppError('ASSET_TOO_LARGE', { field: FILE_FIELD, message: `The request is larger than the limit of ${maxBodyBytes} bytes.` }));
  };
  request.raw.on('data', count);
  for (;;) {
    pending.catch(() => undefined);
    const next = await Promise.race([pending, cut]).catch((error: unknown) => {
      throw multipartError(error);
    });
    if (next.done) return;
    yield next.value;
    pending = parts.next();
  }
}

function assetBody(asset: Asset): AssetResponse {
  const { id, kind, format, bytes, width, height, duration, loudness, title, chapters, characters, created, expiresAt } = asset;
  return { status: 'success', id, kind, format, bytes, width, height, duration, loudness, title, chapters, characters, created_at: created, expires_at: expiresAt };
}

const assetsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { maxBytes } = app.config.assets;
  // Here only: other routes keep answering multipart bodies with 415.
  await app.register(multipart, {
    limits: { fileSize: maxBytes + 1, files: 1, fields: 0, headerPairs: 16 },
  });

  const notFound = () => new AppError('ASSET_NOT_FOUND');

  app.post(
    '/assets',
    {
      schema: {
        tags: ['assets'],
        summary: 'Upload a background image or a music track, to name by its id in later requests',
        consumes: ['multipart/form-data'],
        body: AssetUpload,
        response: { 201: AssetResponse, '4xx': ErrorBody, '5xx': ErrorBody },
      },
      // The body schema documents the form; the file is streamed and checked by the handler, never parsed as a body.
      validatorCompiler: () => () => true,
      onRequest: async (request) => {
        if (!/^multipart\/form-data\s*;/i.test(request.headers['content-type'] ?? '')) {
          throw new AppError('UNSUPPORTED_MEDIA_TYPE', { message: 'Send the file as multipart/form-data, in the field `file`.' });
        }
        if (Number(request.headers['content-length']) > maxBytes + MULTIPART_ALLOWANCE) {
          throw new AppError('ASSET_TOO_LARGE', { field: FILE_FIELD, message: `The file is larger than the limit of ${maxBytes} bytes.` });
        }
      },
    },
    async (request, reply) => {
      const owner = clientId(request);
      // An upload's checks cost CPU like a job: they count against the client's jobs (CLIENT_MAX_JOBS) while they run.
      const release = app.quota.admit(owner, 0);
      let upload: Upload | undefined;
      try {
        for await (const part of partsOf(request, maxBytes + MULTIPART_ALLOWANCE)) {
          if (part.type !== 'file' || part.fieldname !== FILE_FIELD || upload) {
            if (part.type === 'file') part.file.destroy();
            throw oneFile();
          }
          upload = await app.assets.receive(part.file).catch((error: unknown) => {
            throw multipartError(error);
          });
        }
        if (!upload) throw oneFile();
        const asset = await app.assets.admit(upload, owner, request.clientSignal);
        request.log.info({ asset: asset.id, kind: asset.kind, format: asset.format, bytes: asset.bytes }, 'asset stored');
        return reply.code(201).send(assetBody(asset));
      } catch (error) {
        await upload?.discard();
        throw error;
      } finally {
        release();
      }
    },
  );

  app.get(
    '/assets/:id',
    {
      schema: {
        tags: ['assets'],
        summary: 'What an uploaded asset is, and until when it is kept',
        params: AssetParams,
        response: { 200: AssetResponse, '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request) => {
      const asset = await app.assets.get(request.params.id, clientId(request));
      if (!asset) throw notFound();
      return assetBody(asset);
    },
  );

  app.delete(
    '/assets/:id',
    {
      schema: {
        tags: ['assets'],
        summary: 'Delete an uploaded asset now',
        params: AssetParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request, reply) => {
      if (!(await app.assets.delete(request.params.id, clientId(request)))) throw notFound();
      request.log.info({ asset: request.params.id }, 'asset deleted');
      return reply.code(204).send(null);
    },
  );
};

export default assetsRoutes;
