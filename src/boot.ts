import closeWithGrace from 'close-with-grace';
import type { LoggerOptions } from 'pino';
import { attempt, exitOnConfigError, type Config } from './config.js';
import { mediaToolProblems, mediaToolsMessage } from './media/capabilities.js';
import { killAllChildren } from './media/process.js';
import { resolveMediaTools } from './media/tools.js';
import { tuneMalloc } from './app/malloc-tuning.js';

/** A started process (the API or a worker), as its start-up and its shutdown see it. */
export interface Running {
  log: { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** Stops taking work; what still runs after `stopAfterMs` is stopped (and answers SHUTTING_DOWN or goes back to the queue). */
  close(stopAfterMs: number): Promise<void>;
}

/** Time left, at the end of the grace period, for stopped jobs to answer before the process exits. */
const ANSWER_MS = 1000;

/**
 * Start-up both entry points share: the configuration (a bad value ends the process in one line naming it), ffmpeg
 * and ffprobe checked (one line naming the fix, rather than a service that answers every request with 502),
 * child processes tied to this one, and a graceful close on SIGTERM, SIGINT or an uncaught error.
 */
export async function boot<C extends Config, R extends Running>(
  program: string,
  load: () => C,
  start: (config: C, logger: LoggerOptions) => Promise<R>,
): Promise<{ config: C; running: R }> {
  const config = attempt(load, exitOnConfigError(program));
  process.once('exit', killAllChildren);
  tuneMalloc();
  const logger: LoggerOptions = {
    level: config.logLevel,
    ...(process.stdout.isTTY ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss.l' } } } : {}),
  };
  // The service starts while the media tools are checked (a few ffmpeg runs); a problem ends the process all the same.
  const checked = mediaToolProblems(resolveMediaTools(config.paths));
  const starting = start(config, logger).catch(exitOnConfigError(program));
  const mediaProblems = await checked;
  if (mediaProblems.length > 0) {
    console.error(mediaToolsMessage(mediaProblems));
    process.exit(1);
  }
  const running = await starting;
  closeWithGrace({ delay: config.shutdownGraceMs }, async ({ signal, err }) => {
    if (err) running.log.error({ err }, 'closing after an error');
    else running.log.info({ signal }, 'closing');
    await running.close(Math.max(0, config.shutdownGraceMs - ANSWER_MS));
  });
  return { config, running };
}
