import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { AssetStore } from '../../assets/store.js';
import type { Config } from '../../config.js';
import type { EngineRegistry } from '../../engines/index.js';
import { openServices, type ServiceDeps, type WarmUp } from '../services.js';
import type { Ffmpeg } from '../../media/ffmpeg.js';
import type { LexiconStore } from '../../speech/lexicon-store.js';
import type { Synthesizer } from '../../speech/synthesizer.js';
import type { LocalStorage } from '../../storage/local.js';
import type { ScratchSpace } from '../../storage/scratch.js';
import type { Storage } from '../../storage/storage.js';
import type { SplicerCheck } from '../../video/h264/index.js';
import type { VideoMaker } from '../../video/maker.js';

declare module 'fastify' {
  interface FastifyInstance {
    engines: EngineRegistry;
    ffmpeg: Ffmpeg;
    storage: Storage;
    /** The storage when it is a local folder (served under /files). */
    localStorage: LocalStorage | undefined;
    scratch: ScratchSpace;
    synthesizer: Synthesizer;
    maker: VideoMaker;
    splicer: SplicerCheck;
    assets: AssetStore;
    lexicons: LexiconStore;
    warmUp: WarmUp;
  }
}

/** How long after the start-up voice's warm-up the splicer's self-check runs, unless a video asks for it first. */
const SPLICER_CHECK_DELAY_MS = 10_000;

/** What makes speech and videos (app/services.ts, opened as a worker opens them), and the sweeps of old files. */
async function servicesPlugin(app: FastifyInstance, { config, deps }: { config: Config; deps: ServiceDeps }): Promise<void> {
  const services = await openServices(config, deps, {
    gate: app.limiter,
    observer: app.metrics,
    sentenceCache: app.sentenceCache,
    ownsFolders: !config.redisUrl,
    log: app.log,
  });
  app.addHook('onClose', async () => services.close());
  app.decorate('engines', services.engines);
  app.decorate('ffmpeg', services.ffmpeg);
  app.decorate('storage', services.storage);
  app.decorate('localStorage', services.localStorage);
  app.decorate('scratch', services.scratch);
  app.decorate('synthesizer', services.synthesizer);
  app.decorate('maker', services.maker);
  app.decorate('splicer', services.splicer);
  app.decorate('assets', services.assets);
  app.decorate('lexicons', services.lexicons);
  app.decorate('warmUp', services.warmUp);
  // The splicer's self-check runs once, SPLICER_CHECK_DELAY_MS after the start-up voice's warm-up (not to slow down
  // loading its model, nor the first requests: its ffmpeg runs took a second of CPU from them); a failure only sends
  // videos the plain way (/readyz shows it, the service stays ready). A video asked for before runs it and waits.
  let delayed: NodeJS.Timeout | undefined;
  const check = async () => {
    const { ok, reason, cause } = await services.splicer.run();
    if (!ok) app.log.warn({ err: cause, reason }, 'the H.264 splicer failed its self-check: videos are rendered the plain way');
  };
  app.addHook('onReady', async () => {
    void services.warmUp.done.then(() => {
      delayed = setTimeout(() => void check(), SPLICER_CHECK_DELAY_MS);
      delayed.unref();
    });
  });
  app.addHook('onClose', async () => clearTimeout(delayed));
  startRetention(app, `${config.queueName}:sweeper:files`, () => services.storage.sweep(config.retentionMs), config.retentionMs);
  startRetention(app, `${config.queueName}:sweeper:assets`, () => services.assets.sweep(), config.assets.retentionMs);
}

/**
 * Deletes files older than their retention period (generated files, uploaded assets), now and then; 0 keeps them.
 * With REDIS_URL the instances share the files, so one of them sweeps each time: the one that takes `lockKey`
 * (SET NX, held for the interval), not every instance listing the whole bucket.
 */
function startRetention(app: FastifyInstance, lockKey: string, sweepOld: () => Promise<number>, retentionMs: number): void {
  if (retentionMs <= 0) return;
  const intervalMs = Math.min(retentionMs / 4, 3_600_000);
  const elected = async () => !app.redis || (await app.redis.set(lockKey, String(process.pid), 'PX', Math.round(intervalMs * 0.9), 'NX').catch(() => null)) === 'OK';
  const sweep = async () => {
    if (!(await elected())) return;
    await sweepOld().then(
      (removed) => removed > 0 && app.log.info({ removed }, 'old files swept'),
      (err: unknown) => app.log.error({ err }, 'sweeping old files failed'),
    );
  };
  const timer = setInterval(() => void sweep(), intervalMs);
  timer.unref();
  app.addHook('onReady', async () => void sweep());
  app.addHook('onClose', async () => clearInterval(timer));
}

export default fp(servicesPlugin, { name: 'services', dependencies: ['work'] });
