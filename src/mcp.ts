import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { pino } from 'pino';
import { boot } from './boot.js';
import { loadConfig } from './config.js';
import { startEarly } from './app/early-start.js';

/**
 * `voxreel mcp`: the MCP server over stdio, for an agent that starts it itself. The service runs in this process
 * without listening (the tools call its routes in-process, as the first API key when keys are set); stdout is the
 * protocol, so every log line goes to stderr.
 */
const { running } = await boot('voxreel mcp', () => loadConfig(), async (config, logger) => {
  const log = pino({ ...logger, transport: undefined }, pino.destination(2));
  const early = await startEarly(config, log);
  const { buildApp } = await import('./app/build.js');
  const { createMcpServer, injectedApi } = await import('./http/mcp/server.js');
  const app = await buildApp(config, { loggerInstance: log, early });
  await app.ready();
  const key = config.apiKeys[0];
  const server = createMcpServer({ api: injectedApi(app, key === undefined ? {} : { keyHeaders: { authorization: `Bearer ${key}` } }), baseUrl: undefined }, log);
  await server.connect(new StdioServerTransport());
  const close = async (stopAfterMs: number) => {
    await server.close();
    const stopJobs = setTimeout(() => app.jobs.stopRunning(), stopAfterMs);
    stopJobs.unref();
    await app.close();
    clearTimeout(stopJobs);
  };
  return { app, log: app.log, close };
});
// The client closing stdin is its way of ending the session: the service closes as on SIGTERM.
process.stdin.once('end', () => process.kill(process.pid, 'SIGTERM'));
running.log.info({ voices: running.app.voices.listVoices().length }, 'voxreel mcp ready');
