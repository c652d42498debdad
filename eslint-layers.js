// Keeps src/ layered: each folder imports only the layers listed for it, so the flow stays one-way (docs/development.md).
import path from 'node:path';

// The layer table: a layer may import itself and the layers listed for it. Every folder directly under src/ is a key.
export const LAYERS = {
  entry: ['app', 'http', 'usecases', 'jobs', 'api', 'speech', 'video', 'assets', 'engines', 'media', 'storage', 'foundation'],
  app: ['http', 'usecases', 'jobs', 'api', 'speech', 'video', 'assets', 'engines', 'media', 'storage', 'foundation'],
  http: ['usecases', 'api', 'jobs', 'assets', 'media', 'storage', 'foundation'],
  usecases: ['jobs', 'api', 'speech', 'video', 'assets', 'engines', 'media', 'storage', 'foundation'],
  jobs: ['api', 'speech', 'video', 'assets', 'engines', 'media', 'storage', 'foundation'],
  api: ['video', 'assets', 'engines', 'foundation'],
  video: ['speech', 'engines', 'media', 'storage', 'foundation'],
  speech: ['engines', 'media', 'storage', 'foundation'],
  assets: ['media', 'storage', 'foundation'],
  engines: ['media', 'foundation'],
  media: ['foundation'],
  storage: ['foundation'],
  foundation: [],
};

// Files directly in src/ are entry points unless listed here.
export const FOUNDATION_FILES = ['config.ts', 'errors.ts', 'version.ts'];

const FLOW = 'imports follow the flow app → http → usecases → jobs → api → speech/video/assets → engines → media/storage → foundation; see docs/development.md';

/** The layer of a path relative to src/ ('engines/piper/x.ts', 'config.js'), or undefined outside src/. */
export function layerOf(relative) {
  const parts = relative.split(/[\\/]/);
  if (parts[0] === '..' || path.isAbsolute(relative)) return undefined;
  if (parts.length > 1) return parts[0];
  return FOUNDATION_FILES.includes(`${path.parse(relative).name}.ts`) ? 'foundation' : 'entry';
}

const rule = {
  meta: {
    type: 'problem',
    docs: { description: 'Imports inside src/ follow the layer table in eslint-layers.js' },
    schema: [],
  },
  create(context) {
    const srcDir = path.join(context.cwd, 'src');
    const from = layerOf(path.relative(srcDir, context.filename));
    if (from === undefined) return {};

    const check = (source) => {
      const specifier = source?.value;
      if (typeof specifier !== 'string' || !specifier.startsWith('.')) return;
      const to = layerOf(path.relative(srcDir, path.resolve(path.dirname(context.filename), specifier)));
      if (to === undefined || to === from || !(from in LAYERS)) return;
      if (!(to in LAYERS)) {
        context.report({ node: source, message: `'src/${to}/' is in no layer (${specifier}); add it to LAYERS in eslint-layers.js` });
      } else if (!LAYERS[from].includes(to)) {
        context.report({ node: source, message: `'${from}' may not import '${to}' (${specifier}): ${FLOW}` });
      }
    };

    return {
      Program(node) {
        if (!(from in LAYERS)) context.report({ node, message: `'src/${from}/' is in no layer; add it to LAYERS in eslint-layers.js` });
      },
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
      TSImportType: (node) => check(node.argument?.literal),
    };
  },
};

export const layersPlugin = { rules: { imports: rule } };
