// Holds src/ to its layering: the lint rule stops upward imports, no folders import each other in a loop, and no files of src/ or bench/ do.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { FOUNDATION_FILES, LAYERS } from '../../eslint-layers.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const srcDir = path.join(root, 'src');

describe('the layers/imports lint rule', () => {
  const eslint = new ESLint({ cwd: root });
  const layerErrors = async (filePath: string, code: string) => {
    const [result] = await eslint.lintText(code, { filePath });
    return (result?.messages ?? []).filter((message) => message.ruleId === 'layers/imports').map((message) => message.message);
  };

  it.each([
    ['src/storage/example.ts', "import { openQueue } from '../http/job-submission.js';", 'storage', 'http'],
    ['src/engines/piper/example.ts', "export { openQueue } from '../../jobs/queue.js';", 'engines', 'jobs'],
    ['src/errors.ts', "export const media = await import('./media/process.js');", 'foundation', 'media'],
    ['src/speech/example.ts', "import type { FrameSize } from '../video/frame-shapes.js';", 'speech', 'video'],
    ['src/api/example.ts', "export * from '../jobs/spec.js';", 'api', 'jobs'],
    ['src/http/routes/example.ts', "import type { Synthesizer } from '../../speech/synthesizer.js';", 'http', 'speech'],
    ['src/http/example.ts', "export { createEngines } from '../engines/index.js';", 'http', 'engines'],
    ['src/usecases/example.ts', "import { buildApp } from '../app/build.js';", 'usecases', 'app'],
  ])('fails %s importing upward: %s', async (filePath, code, from, to) => {
    expect(await layerErrors(filePath, `${code}\n`)).toEqual([expect.stringContaining(`'${from}' may not import '${to}' (`)]);
  });

  it.each([
    ['src/http/routes/example.ts', "export { openQueue } from '../../jobs/queue.js';"],
    ['src/video/example.ts', "export type { SpokenSpan } from '../speech/speech.js';"],
    ['src/engines/piper/example.ts', "export { HostPool } from '../hosts/host-pool.js';"],
    ['src/jobs/redis/example.ts', "export const s3 = await import('../../storage/s3.js');"],
    ['src/server.ts', "export { buildApp } from './app/build.js';"],
    ['src/http/routes/example.ts', "export { SpeechStreams } from '../../usecases/speech-streams.js';"],
    ['src/config.ts', "export { AppError } from './errors.js';"],
  ])('passes %s: %s', async (filePath, code) => {
    expect(await layerErrors(filePath, `${code}\n`)).toEqual([]);
  });

  it('keeps a front door off the services beneath the use cases, however it reaches them', async () => {
    const frontDoorErrors = async (code: string) => {
      const [result] = await eslint.lintText(code, { filePath: 'src/http/routes/example.ts' });
      return (result?.messages ?? []).filter((message) => message.ruleId === 'no-restricted-syntax').length;
    };
    expect(await frontDoorErrors('export const f = (app: { synthesizer: unknown }) => app.synthesizer;\n')).toBe(1);
    expect(await frontDoorErrors('export const f = ({ jobs }: { jobs: unknown }) => jobs;\n')).toBe(1);
    expect(await frontDoorErrors('export const f = (app: { speech: unknown }) => app.speech;\n')).toBe(0);
  });

  it('fails a folder that is in no layer, and imports into one', async () => {
    expect(await layerErrors('src/cache/example.ts', "export { x } from '../storage/local.js';\n")).toEqual([
      expect.stringContaining("'src/cache/' is in no layer"),
    ]);
    expect(await layerErrors('src/jobs/example.ts', "export { x } from '../cache/x.js';\n")).toEqual([
      expect.stringContaining("'src/cache/' is in no layer (../cache/x.js)"),
    ]);
  });
});

// node → imported node → the 'file → file' imports that make that edge
type Graph = Map<string, Map<string, string[]>>;

const addEdge = (graph: Graph, from: string, to: string, pair: string) => {
  const targets = graph.get(from) ?? graph.set(from, new Map()).get(from)!;
  const pairs = targets.get(to) ?? [];
  if (!pairs.includes(pair)) targets.set(to, [...pairs, pair]);
};

/** One cycle (as a node path that ends where it starts) per back edge; none means the graph is acyclic. */
function findCycles(graph: Graph): string[][] {
  const open = new Set<string>();
  const done = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (node: string) => {
    open.add(node);
    stack.push(node);
    for (const next of [...(graph.get(node)?.keys() ?? [])].sort()) {
      if (open.has(next)) cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!done.has(next)) visit(next);
    }
    stack.pop();
    open.delete(node);
    done.add(node);
  };
  for (const node of [...graph.keys()].sort()) if (!done.has(node)) visit(node);
  return cycles;
}

const describeCycle = (graph: Graph, cycle: string[]) =>
  [
    cycle.join(' → '),
    ...cycle.slice(1).map((to, i) => {
      const from = cycle[i]!;
      return `  ${from} → ${to}: ${graph.get(from)?.get(to)?.join(', ')}`;
    }),
  ].join('\n');

/** Whether one folder holds the other: a folder includes its subfolders, so a parent and its child are one room, not a cycle. */
const nested = (a: string, b: string) => a.startsWith(`${b}/`) || b.startsWith(`${a}/`);

// Folder-level import graph of src/: a folder is one node, and each file directly in src/ is its own node. Folders
// import each other one way, siblings included (engines/piper and engines/hosts); only a folder and its own
// subfolder may meet both ways (engines/index.ts lists engines/piper, which implements engines/types.ts).
function srcGraph(): Graph {
  const graph: Graph = new Map();
  const nodeOf = (file: string) => (path.posix.dirname(file) === '.' ? file : path.posix.dirname(file));
  const files = readdirSync(srcDir, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
  for (const file of files.map((name) => name.split(path.sep).join('/'))) {
    const { importedFiles } = ts.preProcessFile(readFileSync(path.join(srcDir, file), 'utf8'), true, true);
    for (const { fileName } of importedFiles.filter(({ fileName }) => fileName.startsWith('.'))) {
      const target = path.posix.join(path.posix.dirname(file), fileName).replace(/\.js$/, '.ts');
      if (!target.startsWith('../') && nodeOf(target) !== nodeOf(file) && !nested(nodeOf(target), nodeOf(file))) addEdge(graph, nodeOf(file), nodeOf(target), `${file} → ${target}`);
    }
  }
  return graph;
}

describe('folder-level import cycles', () => {
  it('the cycle finder reports a made-up cycle with the imports that make it', () => {
    const graph: Graph = new Map();
    addEdge(graph, 'a', 'b', 'a/x.ts → b/y.ts');
    addEdge(graph, 'b', 'c', 'b/y.ts → c/z.ts');
    addEdge(graph, 'c', 'a', 'c/z.ts → a/w.ts');
    addEdge(graph, 'c', 'd', 'c/z.ts → d/v.ts');
    const cycles = findCycles(graph);
    expect(cycles).toEqual([['a', 'b', 'c', 'a']]);
    expect(describeCycle(graph, cycles[0]!)).toContain('c → a: c/z.ts → a/w.ts');
    graph.get('c')!.delete('a');
    expect(findCycles(graph)).toEqual([]);
  });

  it('src/ has none', () => {
    const graph = srcGraph();
    expect(findCycles(graph).map((cycle) => describeCycle(graph, cycle))).toEqual([]);
  });
});

// File-level import graph of src/ and bench/ (type-only imports included: a circle of types is as hard to read).
function fileGraph(dirs: string[]): Graph {
  const graph: Graph = new Map();
  for (const dir of dirs) {
    const files = readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
    for (const file of files.map((name) => path.posix.join(dir, name.split(path.sep).join('/')))) {
      const { importedFiles } = ts.preProcessFile(readFileSync(path.join(root, file), 'utf8'), true, true);
      for (const { fileName } of importedFiles.filter(({ fileName }) => fileName.startsWith('.'))) {
        const target = path.posix.join(path.posix.dirname(file), fileName).replace(/\.js$/, '.ts');
        addEdge(graph, file, target, `${file} → ${target}`);
      }
    }
  }
  return graph;
}

describe('file-level import cycles', () => {
  it('src/ and bench/ have none', () => {
    const graph = fileGraph(['src', 'bench']);
    expect(graph.get('src/api/video-options.ts')?.has('src/video/frame-shapes.ts')).toBe(true);
    expect(findCycles(graph).map((cycle) => describeCycle(graph, cycle))).toEqual([]);
  });
});

describe('the splicer is fenced', () => {
  it('src/video/h264/ takes of the rest of video/ only the frame shapes: its captions are handed to it drawn', () => {
    const graph = fileGraph(['src']);
    const reaches = [...graph.entries()]
      .filter(([file]) => file.startsWith('src/video/h264/'))
      .flatMap(([, targets]) => [...targets.keys()])
      .filter((target) => target.startsWith('src/video/') && !target.startsWith('src/video/h264/'));
    expect(reaches.length).toBeGreaterThan(0);
    expect([...new Set(reaches)]).toEqual(['src/video/frame-shapes.ts']);
  });
});

describe('the layer table', () => {
  const entries = readdirSync(srcDir, { withFileTypes: true });
  const folders = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);

  it('names every folder directly under src/', () => {
    expect(folders.filter((folder) => !(folder in LAYERS))).toEqual([]);
  });

  it('names no folder or foundation file that src/ lacks', () => {
    const layerFolders = Object.keys(LAYERS).filter((layer) => layer !== 'entry' && layer !== 'foundation');
    const files = entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
    expect(layerFolders.filter((folder) => !folders.includes(folder))).toEqual([]);
    expect(FOUNDATION_FILES.filter((file) => !files.includes(file))).toEqual([]);
  });
});
