// Whether dist/ holds the build of the source as it is: the build records a hash of what it was made from.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** What a build is made from: every file of src/ and the compiler's settings. */
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json'];
export const STAMP = 'dist/BUILD.json';

/** SHA-256 over the inputs' paths and contents, in a stable order. */
export function sourceHash(root) {
  const hash = createHash('sha256');
  const add = (relative) => {
    const full = path.join(root, relative);
    const entries = readdirSync(full, { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(root, path.join(entry.parentPath ?? entry.path, entry.name)))
      .sort();
    for (const file of entries) hash.update(`${file}\0`).update(readFileSync(path.join(root, file))).update('\0');
  };
  for (const input of INPUTS) {
    if (input.includes('.')) hash.update(`${input}\0`).update(readFileSync(path.join(root, input))).update('\0');
    else add(input);
  }
  return hash.digest('hex');
}

/** `fresh`, `stale` (src/ changed since), `missing`; a copy without src/ (the Docker image) is its build. */
export function buildState(root) {
  const stamp = path.join(root, STAMP);
  if (!existsSync(stamp)) return 'missing';
  if (!existsSync(path.join(root, 'src'))) return 'fresh';
  const built = JSON.parse(readFileSync(stamp, 'utf8'));
  return built.source === sourceHash(root) ? 'fresh' : 'stale';
}
