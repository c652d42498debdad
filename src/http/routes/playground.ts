import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

/** The page's files: hand-written HTML, CSS and browser modules, served as they are (no build step). */
const PUBLIC_DIR = fileURLToPath(new URL('../../../public/', import.meta.url));
/** Where the page's CSS and scripts are; the page itself is `/`. Public, like /docs (see plugins/access.ts). */
export const PLAYGROUND_PREFIX = '/playground';

/** The page talks to this origin only; its audio and video come from here or from CDN_URL. */
function contentSecurityPolicy(cdnUrl: string): string {
  const media = ["'self'", 'blob:', new URL(cdnUrl).origin].join(' ');
  return [
    "default-src 'self'",
    "connect-src 'self'",
    `media-src ${media}`,
    "img-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The playground: a page at `/` to try the API in a browser. */
const playgroundRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const policy = contentSecurityPolicy(app.config.cdnUrl);
  await app.register(fastifyStatic, {
    root: PUBLIC_DIR,
    prefix: `${PLAYGROUND_PREFIX}/`,
    // A route per file there at start-up; any other path is the API's own 404.
    wildcard: false,
    globIgnore: ['index.html'],
    index: false,
    list: false,
    dotfiles: 'deny',
    // Unversioned names: browsers keep a copy but check it (ETag, Last-Modified) before each use.
    cacheControl: false,
    setHeaders: (reply) => {
      reply.header('cache-control', 'no-cache');
      reply.header('content-security-policy', policy);
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'no-referrer');
    },
  });

  app.get('/', { schema: { hide: true } }, (_request, reply) => reply.sendFile('index.html'));
};

export default playgroundRoutes;
