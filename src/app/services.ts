import { AssetStore, type Gate } from '../assets/store.js';
import type { Config } from '../config.js';
import type { EngineRegistry } from '../engines/index.js';
import { startWarmUp, type StartLog, type WarmUp } from '../engines/start-up.js';
import { Ffmpeg } from '../media/ffmpeg.js';
import { tiedLauncher } from '../media/process.js';
import { resolveMediaTools, type MediaTools } from '../media/tools.js';
import { ScratchSpace } from '../storage/scratch.js';
import { LocalStorage } from '../storage/local.js';
import { openStorage } from '../storage/backends.js';
import type { Storage } from '../storage/storage.js';
import type { SentenceCache } from '../speech/sentence-cache.js';
import { LexiconStore } from '../speech/lexicon-store.js';
import { prepareInProcessEncoding } from '../speech/audio-encoding.js';
import { Synthesizer, type SpeechObserver } from '../speech/synthesizer.js';
import { SplicerCheck } from '../video/h264/index.js';
import { spliceSample } from '../video/splice-sample.js';
import { VideoMaker } from '../video/maker.js';
import { PICTURE } from '../video/render.js';
import { startEarly, type EarlyStart } from './early-start.js';

/** What a process may be given instead of what it would build (tests put in failing parts). */
export interface ServiceDeps {
  engines?: EngineRegistry;
  tools?: MediaTools;
  storage?: Storage;
  /** The H.264 splicer's self-check; a test may put in one whose splicer fails. */
  splicer?: SplicerCheck;
  /** What the entry point started before loading the rest (early-start.ts); these services own it from then on. */
  early?: EarlyStart;
}

export type { WarmUp } from '../engines/start-up.js';

/**
 * Everything that makes speech and videos, without HTTP: the API process and `voxreel worker` open the same set,
 * so a job renders the same wherever it runs.
 */
export interface Services {
  storage: Storage;
  /** The storage when it is a local folder (the API serves it under /files). */
  localStorage?: LocalStorage;
  scratch: ScratchSpace;
  engines: EngineRegistry;
  ffmpeg: Ffmpeg;
  synthesizer: Synthesizer;
  splicer: SplicerCheck;
  maker: VideoMaker;
  assets: AssetStore;
  /** Uploaded pronunciation lexicons, in ASSETS_DIR beside the assets. */
  lexicons: LexiconStore;
  /** The start-up voice's warm-up (WARM_VOICE), under way in the background. */
  warmUp: WarmUp;
  /** Stops what was started here (engine hosts, warm encoders, the splicer's check, scratch space). */
  close(): Promise<void>;
}

export interface ServiceOptions {
  /** The work gate uploads' checks wait at (the API's limiter); workers do not take uploads. */
  gate: Gate;
  observer?: SpeechObserver;
  /** Synthesized sentences kept for reuse; none by default. */
  sentenceCache?: SentenceCache;
  /**
   * Whether this process alone writes the folders it opens, so that it may remove at start what an earlier one left
   * half-written; processes that share them (REDIS_URL) leave that to the retention sweeps.
   */
  ownsFolders: boolean;
  log?: StartLog;
}

export async function openServices(config: Config, deps: ServiceDeps, options: ServiceOptions): Promise<Services> {
  const closers: Array<() => Promise<void> | void> = [];
  const { scratch, engines: start } = await earlyStart(config, deps, options.log);
  closers.push(() => scratch.close());
  // Backends other than the local folder write files first in scratch space (a crash's leftovers there go at the next start).
  const storage = deps.storage ?? (await openStorage(config, { tempDir: () => scratch.shared('uploads'), ownsFolders: options.ownsFolders }));
  const localStorage = !deps.storage && storage instanceof LocalStorage ? storage : undefined;
  const engines = await start.engines;
  // Engines a test gives are its own to close.
  if (!deps.engines) closers.push(() => engines.close());
  const tools = deps.tools ?? resolveMediaTools(config.paths);
  // fluent-ffmpeg starts ffmpeg by its path: a launcher makes it die with us, like every other child.
  const ffmpeg = new Ffmpeg({ ...tools, ffmpeg: await tiedLauncher(tools.ffmpeg, await scratch.shared('bin')) });
  // Short speech is encoded in this process (no ffmpeg per request): its encoders are loaded and checked now, once.
  const encoders = await prepareInProcessEncoding();
  options.log?.info({ encoders }, 'in-process encoders ready');
  const synthesizer = new Synthesizer(engines, ffmpeg, storage, scratch, config.maxOutput, options.observer, { sentenceCache: options.sentenceCache });
  closers.push(() => synthesizer.close());
  const splicer = deps.splicer ?? new SplicerCheck(ffmpeg, PICTURE, spliceSample, { scratch });
  closers.push(() => splicer.close());
  const maker = new VideoMaker({ synthesizer, ffmpeg, storage, splicer, scratch, keyframeSeconds: config.keyframeSeconds });
  // A file stays for the longest job after it expires.
  const { dir, retentionMs } = config.assets;
  const assetOptions = { dir, limits: config.assets, retentionMs, graceMs: config.videoTimeoutMs, quotaBytes: config.assets.quotaBytes, minFreeBytes: config.minFreeDiskBytes };
  const assets = new AssetStore(assetOptions, ffmpeg, options.gate);
  await assets.init(options.ownsFolders);
  const lexicons = new LexiconStore(dir);
  await lexicons.init();
  return {
    warmUp: start.warmUp,
    storage,
    localStorage,
    scratch,
    engines,
    ffmpeg,
    synthesizer,
    splicer,
    maker,
    assets,
    lexicons,
    close: async () => {
      for (const close of closers.reverse()) await close();
    },
  };
}

/** What the entry point started, or else the same started now; engines a test gives are warmed as WARM_VOICE says. */
async function earlyStart(config: Config, deps: ServiceDeps, log: StartLog | undefined): Promise<EarlyStart> {
  if (!deps.engines) return deps.early ?? startEarly(config, log);
  const engines = Promise.resolve(deps.engines);
  return { scratch: await ScratchSpace.open(config.scratchDir), engines: { engines, warmUp: startWarmUp(engines, config.warmVoice, log) } };
}
