// Loaded by the entry points before the rest of the service: keep its imports few.
import type { Config } from '../config.js';
import { startEngines, type EngineStart, type StartLog } from '../engines/start-up.js';
import { ScratchSpace } from '../storage/scratch.js';

/** The scratch space and the engines on their way up, started first thing by an entry point. */
export interface EarlyStart {
  scratch: ScratchSpace;
  engines: EngineStart;
}

/**
 * Opens the scratch space and starts the engines (and the start-up voice's warm-up) in it. The entry points call
 * it first thing, so that loading the start-up voice's model (the slowest part of a start) and loading the rest of
 * the service go on at once.
 */
export async function startEarly(config: Config, log?: StartLog): Promise<EarlyStart> {
  const scratch = await ScratchSpace.open(config.scratchDir);
  return { scratch, engines: startEngines(config, { tempDir: await scratch.shared('engines'), log }) };
}
