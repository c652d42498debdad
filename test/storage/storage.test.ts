import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngines } from '../../src/engines/index.js';
import type { ErrorBody } from '../../src/api/errors.js';
import { LocalStorage } from '../../src/storage/local.js';
import { buildTestApp } from '../helpers/helpers.js';

const tempRoots: string[] = [];
async function tempRoot(): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'voxreel-storage-'));
  tempRoots.push(root);
  return root;
}
afterAll(async () => {
  await Promise.all(tempRoots.map((root) => rm(root, { recursive: true, force: true })));
});

describe('LocalStorage', () => {
  it('publishes a file whole on commit, at an unguessable name', async () => {
    const storage = new LocalStorage(await tempRoot(), 'https://cdn.example/v');
    await storage.init();
    const name = storage.newName();
    expect(name).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(storage.newName()).not.toBe(name);
    const pending = await storage.pending('audio', name, 'mp3');
    await writeFile(pending.path, 'abc');
    const final = path.join(storage.root, 'audio', `${name}.mp3`);
    await expect(readFile(final)).rejects.toThrow(); // not visible before commit
    const stored = await pending.commit();
    expect(stored).toEqual({ key: `audio/${name}.mp3`, url: `https://cdn.example/v/audio/${name}.mp3`, bytes: 3 });
    expect(await readFile(final, 'utf8')).toBe('abc');
  });

  it('leaves nothing behind on discard', async () => {
    const storage = new LocalStorage(await tempRoot(), 'http://x');
    await storage.init();
    const pending = await storage.pending('video', storage.newName(), 'mp4');
    await writeFile(pending.path, 'partial');
    await pending.discard();
    await expect(readFile(pending.path)).rejects.toThrow();
  });

  it('knows whether a published file exists, and nothing else', async () => {
    const base = await tempRoot();
    const storage = new LocalStorage(path.join(base, 'output'), 'http://x');
    await storage.init();
    const pending = await storage.pending('audio', storage.newName(), 'mp3');
    await writeFile(pending.path, 'abc');
    const stored = await pending.commit();
    expect(await storage.exists(stored.key)).toBe(true);
    expect(await storage.exists('audio/missing.mp3')).toBe(false);
    expect(await storage.exists('audio')).toBe(false); // a folder
    const unpublished = await storage.pending('audio', storage.newName(), 'mp3');
    await writeFile(unpublished.path, 'abc');
    expect(await storage.exists(path.relative(storage.root, unpublished.path))).toBe(false); // in .tmp
    await writeFile(path.join(base, 'outside.mp3'), 'abc');
    expect(await storage.exists('audio/../../outside.mp3')).toBe(false);
    await storage.delete(stored.key);
    expect(await storage.exists(stored.key)).toBe(false);
  });

  it('removes its temporary file when a commit fails', async () => {
    const storage = new LocalStorage(await tempRoot(), 'http://x');
    await storage.init();
    const pending = await storage.pending('audio', storage.newName(), 'mp3');
    await writeFile(pending.path, 'abc');
    await rm(path.join(storage.root, 'audio'), { recursive: true });
    await expect(pending.commit()).rejects.toThrow();
    expect(await readdir(path.join(storage.root, '.tmp'))).toEqual([]);
  });

  it('sweeps old files and, at start-up, an earlier crash’s temporary files', async () => {
    const root = await tempRoot();
    await mkdir(path.join(root, '.tmp'), { recursive: true });
    await writeFile(path.join(root, '.tmp', 'audio-leftover.1234.mp3'), 'x');
    const storage = new LocalStorage(root, 'http://x');
    await storage.init();
    await expect(readFile(path.join(root, '.tmp', 'audio-leftover.1234.mp3'))).rejects.toThrow();

    const old = path.join(root, 'audio', 'old.mp3');
    const fresh = path.join(root, 'audio', 'fresh.mp3');
    await writeFile(old, 'x');
    await writeFile(fresh, 'x');
    const twoDaysAgo = new Date(Date.now() - 48 * 3_600_000);
    await utimes(old, twoDaysAgo, twoDaysAgo);
    expect(await storage.sweep(24 * 3_600_000)).toBe(1);
    await expect(readFile(old)).rejects.toThrow();
    expect(await readFile(fresh, 'utf8')).toBe('x');
  });
});

function canMountTmpfs(): boolean {
  try {
    execFileSync('mount', ['--version'], { stdio: 'ignore' });
    return process.getuid?.() === 0;
  } catch {
    return false;
  }
}

describe('a full output directory', () => {
  it.skipIf(!canMountTmpfs())('answers 503 STORAGE_FULL before writing, with Retry-After, and publishes nothing', async () => {
    const mountPoint = await tempRoot();
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=96k', 'tmpfs', mountPoint]);
    const engines = await createEngines({ poolSize: 1, jobTimeoutMs: 30_000 });
    const t = await buildTestApp({ OUTPUT_DIR: mountPoint }, { engines });
    try {
      const text = 'This sentence is long enough to overflow a very small disk once it is written as wave audio. '.repeat(4);
      const response = await t.app.inject({ method: 'POST', url: '/tts', payload: { text, voice: 'espeak-ng:en-us', format: 'wav' } });
      // The file's projected size is checked against the free space before it is written (issue 36).
      expect(response.statusCode, response.body).toBe(503);
      expect(response.json<ErrorBody>().error.code).toBe('STORAGE_FULL');
      expect(response.headers['retry-after']).toBeDefined();
      expect(await readdir(path.join(mountPoint, 'audio'))).toEqual([]);
      expect(await readdir(path.join(mountPoint, '.tmp'))).toEqual([]);
    } finally {
      await t.close();
      await engines.close();
      execFileSync('umount', [mountPoint]);
    }
  });
});
