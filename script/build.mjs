// `npm run build`: compiles src/ into dist/ (what `npm start`, `voxreel worker` and the engine hosts run) and
// records what it was built from. `--if-stale` builds only when dist/ is missing or older than src/ (script/setup).
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildState, sourceHash, STAMP } from './build-state.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (process.argv.includes('--if-stale') && buildState(root) === 'fresh') process.exit(0);
const source = sourceHash(root);
// A clean build: files of modules since removed must not linger in dist/.
rmSync(path.join(root, 'dist'), { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
// What the modules read beside themselves (data files such as eSpeak NG's recorded voices) goes where they run.
for (const entry of readdirSync(path.join(root, 'src'), { withFileTypes: true, recursive: true })) {
  if (!entry.isFile() || entry.name.endsWith('.ts')) continue;
  const relative = path.relative(path.join(root, 'src'), path.join(entry.parentPath ?? entry.path, entry.name));
  cpSync(path.join(root, 'src', relative), path.join(root, 'dist', relative));
}
writeFileSync(path.join(root, STAMP), `${JSON.stringify({ source, builtAt: new Date().toISOString() })}\n`);
console.log('build: dist/ is up to date with src/');
