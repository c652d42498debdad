import { pino } from 'pino';
import { boot } from './boot.js';
import { loadConfig } from './config.js';
import { startEarly } from './app/early-start.js';

/** `npm start`, `voxreel serve`: the HTTP API. */
const { config, running } = await boot('voxreel', () => loadConfig(), async (config, logger) => {
  const log = pino(logger);
  // The engines start first; the rest of the service is loaded while they do.
  const early = await startEarly(config, log);
  const { buildApp } = await import('./app/build.js');
  const app = await buildApp(config, { loggerInstance: log, early });
  // Home Assistant's protocol, on a port of its own (WYOMING_PORT), when asked for.
  const wyoming = config.wyoming.port > 0 ? await (await import('./http/wyoming/server.js')).startWyoming(app, config.wyoming) : undefined;
  const close = async (stopAfterMs: number) => {
    const stopJobs = setTimeout(() => app.jobs.stopRunning(), stopAfterMs);
    stopJobs.unref();
    await wyoming?.close();
    await app.close();
    clearTimeout(stopJobs);
  };
  return { app, log: app.log, close };
});
const { app } = running;

const address = await app.listen({ port: config.port, host: config.host });
// The neural voices (Kokoro's, Piper's) speak `speed` themselves; without one every voice is a robotic one.
if (!app.voices.listVoices().some((voice) => voice.naturalSpeed)) {
  app.log.warn(
    { voicesDir: config.voicesDir },
    'No neural voice is installed, so the voices are robotic: add the default one with `npm run voices -- add en_US-joe-medium` (docs/operations.md, Voices)',
  );
}
app.log.info({ address, cdnUrl: config.cdnUrl, outputDir: config.outputDir, voices: app.voices.listVoices().length }, 'voxreel ready');
