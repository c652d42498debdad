import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type Compiled = ((data: unknown) => unknown) & { errors?: unknown };
type Factory = (...args: unknown[]) => (route: unknown) => Compiled;

// Fastify's own defaults (its dependencies, resolved from it): the same Ajv and fast-json-stringify it would use.
const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
const defaultValidators = (fromFastify('@fastify/ajv-compiler') as () => Factory)();
const defaultSerializers = (fromFastify('@fastify/fast-json-stringify-compiler') as () => Factory)();

/**
 * Fastify compiles every route's validators and serializers when the app gets ready: 0.25–0.3 s of a start here
 * (Ajv and fast-json-stringify generating code for some 60 routes). These compile each on its first call instead,
 * and `compileRest` compiles what no request has needed yet in the background, one per turn of the event loop,
 * so that the first request of a route does not pay for it either. Validation errors read `errors` as Fastify does.
 * (Fastify then takes the validators for custom ones, which only changes header schemas: their keys must be lowercase.)
 */
/** How often the background compiling looks again whether the requests in progress are done. */
const IDLE_POLL_MS = 25;

export function deferredCompilers(): { factory: CompilersFactory; compileRest(busy: () => boolean): Promise<void> } {
  const pending = new Set<() => unknown>();
  const deferring =
    (factory: Factory, withErrors: boolean): Factory =>
    (...args) => {
      const build = factory(...args);
      return (route) => {
        let compiled: Compiled | undefined;
        const get = () => {
          pending.delete(get);
          return (compiled ??= build(route));
        };
        pending.add(get);
        const call: Compiled = (data) => get()(data);
        if (withErrors) Object.defineProperty(call, 'errors', { get: () => get().errors });
        return call;
      };
    };
  return {
    factory: {
      buildValidator: deferring(defaultValidators, true) as CompilersFactory['buildValidator'],
      buildSerializer: deferring(defaultSerializers, false) as CompilersFactory['buildSerializer'],
    },
    /** Only while `busy()` is false: a request that comes meanwhile is not slowed by the compiling (measured: a start's first /tts 1.6x the next with it, 1.3-1.4x without). */
    async compileRest(busy) {
      for (const compile of pending) {
        do await new Promise((resolve) => setTimeout(resolve, busy() ? IDLE_POLL_MS : 0));
        while (busy());
        compile();
      }
    },
  };
}
