import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

/** A fresh temporary directory for the tests of this file (or describe block), removed after them. */
export function useTempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  afterAll(() => rm(dir, { recursive: true, force: true }));
  return dir;
}
