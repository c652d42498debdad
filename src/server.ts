import closeWithGrace from 'close-with-grace';
import { buildApp } from './http/app.js';
import { attempt, exitOnConfigError, loadConfig } from './config.js';
import { killAllChildren } from './media/process.js';
import { mediaToolProblems, mediaToolsMessage } from './media/capabilities.js';
import { resolveMediaTools } from './media/tools.js';

const config = attempt(() => loadConfig(), exitOnConfigError('voxreel'));

// Fail fast, in one line naming the fix, rather than report ready and answer every request with 502.
const mediaProblems = await mediaToolProblems(resolveMediaTools(config.paths));
if (mediaProblems.length > 0) {
  console.error(mediaToolsMessage(mediaProblems));
  process.exit(1);
}

const app = await buildApp(config, {
  logger: {
    level: config.logLevel,
    ...(process.stdout.isTTY ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss.l' } } } : {}),
  },
}).catch(exitOnConfigError('voxreel'));

process.once('exit', killAllChildren);
/** Time left, at the end of the grace period, for stopped jobs to answer before the process exits. */
const ANSWER_MS = 1000;
closeWithGrace({ delay: config.shutdownGraceMs }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'closing after an error');
  else app.log.info({ signal }, 'closing');
  const stopJobs = setTimeout(() => app.jobs.stopRunning(), Math.max(0, config.shutdownGraceMs - ANSWER_MS));
  stopJobs.unref();
  await app.close();
  clearTimeout(stopJobs);
});

const address = await app.listen({ port: config.port, host: config.host });
if (!app.engines.listVoices().some((voice) => voice.engine === 'piper')) {
  app.log.warn(
    { voicesDir: config.voicesDir },
    'No neural voice is installed, so the voices are robotic: add the default one with `npm run voices -- add en_US-joe-medium` (README, Voices)',
  );
}
app.log.info({ address, cdnUrl: config.cdnUrl, outputDir: config.outputDir, voices: app.engines.listVoices().length }, 'voxreel ready');
