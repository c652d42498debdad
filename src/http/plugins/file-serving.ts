import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyStatic from '@fastify/static';
import { contentTypeOf } from '../../storage/content-types.js';
import { FILES_PREFIX } from '../../config.js';
import type { LocalStorage } from '../../storage/local.js';

/**
 * A suffix range longer than the file means the whole file (RFC 9110 §14.1.2: `bytes=-100000` on a 50 kB file
 * is 206 with all of it); @fastify/send answers it 416, so such a suffix is shortened to the file's size first.
 */
async function clampSuffixRanges(request: FastifyRequest, storage: LocalStorage): Promise<void> {
  const range = request.raw.headers.range;
  const specs = range === undefined ? undefined : /^\s*bytes=(.*)$/i.exec(range)?.[1];
  if (specs === undefined || !/(?:^|,)\s*-\d/.test(specs)) return;
  const file = (request.params as { '*'?: string })['*'] ?? '';
  if (!storage.isServable(file)) return;
  const size = await stat(path.join(storage.root, file)).then(
    (info) => info.size,
    () => undefined,
  );
  if (size === undefined) return;
  const clamped = specs.split(',').map((spec) => {
    const suffix = /^\s*-(\d+)\s*$/.exec(spec)?.[1];
    return suffix !== undefined && Number(suffix) > size ? `-${size}` : spec;
  });
  request.raw.headers.range = `bytes=${clamped.join(',')}`;
}

/** OUTPUT_DIR under /files/: only what `storage.isServable` allows, with ranges and long-lived caching. */
export default async function fileServing(app: FastifyInstance, options: { storage: LocalStorage }): Promise<void> {
  const { storage } = options;
  app.addHook('preHandler', async (request) => clampSuffixRanges(request, storage));
  await app.register(fastifyStatic, {
    root: storage.root,
    prefix: `${FILES_PREFIX}/`,
    dotfiles: 'deny',
    index: false,
    list: false,
    // Names are random and never reused, so a cached copy is always right.
    maxAge: '365d',
    immutable: true,
    // Our own table where it knows the extension (an m4b is audio/mp4, which send's does not know): as a bucket answers.
    setHeaders: (response, file) => {
      const type = contentTypeOf(file);
      if (type !== 'application/octet-stream') void response.header('content-type', type);
    },
    allowedPath: (pathName) => storage.isServable(pathName),
  });
}
