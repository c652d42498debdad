import type { Config } from '../config.js';
import { createEngines, warmVoice, type EngineLog, type EngineRegistry } from './index.js';

/** The voice spoken at start-up (WARM_VOICE): `warming` until it has been, then `warm`, `failed` or `off`. */
export interface WarmUp {
  state: 'warming' | 'warm' | 'failed' | 'off';
  voice?: string;
  done: Promise<void>;
}

/** The engines on their way up, and the start-up voice's warm-up that follows them. */
export interface EngineStart {
  engines: Promise<EngineRegistry>;
  warmUp: WarmUp;
}

export type StartLog = EngineLog & { error(obj: object, msg: string): void };

/**
 * Starts the engines and then warms the start-up voice (loading its model is the slowest part of a start). The
 * entry points call this before they load the rest of the service, so both go on at once.
 */
export function startEngines(config: Config, { tempDir, log }: { tempDir: string; log?: StartLog }): EngineStart {
  const engines = createEngines(
    {
      poolSize: config.concurrency,
      tempDir,
      festivalPath: config.paths.festival,
      voicesDir: config.voicesDir,
      startTimeoutMs: config.engineStartTimeoutMs,
      warmVoice: config.warmVoice,
      onnxRuntimeLibrary: config.onnxRuntimeLibrary,
      allocator: config.engineAllocator,
    },
    log,
  );
  return { engines, warmUp: startWarmUp(engines, config.warmVoice, log) };
}

/** Warms `choice` (WARM_VOICE) once the engines are up; the state says how far it got. */
export function startWarmUp(engines: Promise<EngineRegistry>, choice: string | undefined, log?: StartLog): WarmUp {
  if (choice === undefined) return { state: 'off', done: Promise.resolve() };
  const warm: WarmUp = { state: 'warming', done: Promise.resolve() };
  const started = performance.now();
  warm.done = engines
    .then((registry) => warmVoice(registry, choice))
    .then(
      (voice) => {
        Object.assign(warm, { state: voice ? 'warm' : 'off', voice });
        if (voice) log?.info({ voice, seconds: Math.round(performance.now() - started) / 1000 }, 'voice warmed up');
      },
      (err: unknown) => {
        warm.state = 'failed';
        log?.error({ err, voice: choice }, 'warming up the start-up voice failed: it loads on its first request instead');
      },
    );
  return warm;
}
