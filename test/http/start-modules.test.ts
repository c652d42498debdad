import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useTempDir } from '../helpers/temp-dir.js';

const run = promisify(execFile);

/** Loaded only when the configuration uses them (STORAGE=s3, REDIS_URL, MCP) or on first use (fonts: a video). */
const OPTIONAL = ['@aws-sdk/client-s3', '@aws-sdk/s3-request-presigner', 'bullmq', 'ioredis', '@modelcontextprotocol/sdk', 'fontkit'];

describe('a start with the default configuration', () => {
  const dir = useTempDir('voxreel-start-modules-');

  it('builds the app without loading the S3 SDK, BullMQ, ioredis, the MCP SDK or fontkit', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'fixtures/app-packages.ts'], {
      env: { ...process.env, OUTPUT_DIR: path.join(dir, 'output'), SCRATCH_DIR: path.join(dir, 'scratch'), WARM_VOICE: 'none', LOG_LEVEL: 'silent' },
      timeout: 60_000,
    });
    const packages = JSON.parse(stdout.trim().split('\n').at(-1) ?? '[]') as string[];
    // The hook saw the app's own imports, so an absence below means something.
    expect(packages).toEqual(expect.arrayContaining(['fastify', '@sinclair/typebox']));
    expect(packages.filter((name) => OPTIONAL.includes(name))).toEqual([]);
  }, 90_000);
});
