import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EnvSchema } from '../../src/config.js';
import { STORAGE_BACKENDS } from '../../src/storage/backends.js';
import { CAPTION_STYLES, STYLE_PRESETS } from '../../src/video/caption-style.js';
import { CaptionStyle } from '../../src/api/video-options.js';

/** docs/development.md's claims about the source, held against the tree. */
const root = fileURLToPath(new URL('../..', import.meta.url));
const development = readFileSync(path.join(root, 'docs/development.md'), 'utf8');
const filesIn = (folder: string) => readdirSync(path.join(root, folder), { withFileTypes: true });

describe('docs/development.md, source layout', () => {
  const rows = [...development.matchAll(/^\| `src\/([a-z-]+)\/` \| (.+) \|$/gm)].map(([, folder, text]) => ({ folder: folder!, text: text! }));

  it('describes every folder of src/', () => {
    const folders = filesIn('src').filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect(rows.map((row) => row.folder).sort()).toEqual(folders.sort());
  });

  it.each(rows)('src/$folder/: names every file and subfolder it has, and only those', ({ folder, text }) => {
    const named = new Set([...text.matchAll(/`([\w.-]+(?:\.ts|\/))`/g)].map(([, name]) => name!));
    const own = filesIn(`src/${folder}`).map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name)).filter((name) => !name.endsWith('.d.ts'));
    const everyFile = readdirSync(path.join(root, 'src', folder), { recursive: true, encoding: 'utf8' }).map((name) => path.basename(name));
    expect(own.filter((name) => !named.has(name)), 'in the tree, not in the docs').toEqual([]);
    expect([...named].filter((name) => !everyFile.includes(name.replace(/\/$/, ''))), 'in the docs, not in the tree').toEqual([]);
  });
});

describe('extension points', () => {
  it('a new engine is its folder and one line of ENGINES', () => {
    const registry = readFileSync(path.join(root, 'src/engines/index.ts'), 'utf8');
    const engineFolders = filesIn('src/engines').filter((entry) => entry.isDirectory() && !['hosts', 'onnx'].includes(entry.name)).map((entry) => entry.name);
    const lines = registry.slice(registry.indexOf('const ENGINES')).split('];')[0]!.split('\n').filter((line) => /^\s+\{ name: /.test(line));
    expect(lines).toHaveLength(engineFolders.length);
    for (const folder of engineFolders) expect(registry).toContain(`from './${folder}/engine.js'`);
  });

  it('no list outside src/engines/ names engines by kind: what a voice can do is its own to say (Voice.phonemes, naturalSpeed, wordTimings)', () => {
    const engineFolders = filesIn('src/engines').filter((entry) => entry.isDirectory() && !['hosts', 'onnx'].includes(entry.name)).map((entry) => entry.name);
    const names = [...engineFolders.filter((name) => name !== 'espeak'), 'espeak-ng'];
    const named = new RegExp(`['"](${names.join('|')})['"]`, 'u');
    const outside = readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts') && !file.startsWith(`engines${path.sep}`))
      .filter((file) => named.test(readFileSync(path.join(root, 'src', file), 'utf8')));
    expect(names).toContain('piper');
    expect(outside).toEqual([]);
  });

  it("a new caption style is one entry of STYLE_PRESETS: the API's values and their description come from it", () => {
    expect(CAPTION_STYLES).toEqual(Object.keys(STYLE_PRESETS));
    expect(CaptionStyle.anyOf.map((literal) => literal.const)).toEqual(CAPTION_STYLES);
    for (const style of CAPTION_STYLES) expect(CaptionStyle.description).toContain(`\`${style}\`: ${STYLE_PRESETS[style].description}`);
  });

  it('a new storage backend is src/storage/<kind>.ts exporting openStorage, its line of STORAGE_BACKENDS, and its configuration', async () => {
    const kinds = EnvSchema.properties.STORAGE.anyOf.map((literal) => literal.const);
    expect(Object.keys(STORAGE_BACKENDS).sort()).toEqual(kinds.sort());
    const storageFile = readFileSync(path.join(root, 'src/storage/backends.ts'), 'utf8');
    for (const kind of kinds) {
      expect(storageFile).toContain(`${kind}: () => import('./${kind}.js'),`);
      expect(typeof (await STORAGE_BACKENDS[kind]()).openStorage).toBe('function');
    }
  });
});
