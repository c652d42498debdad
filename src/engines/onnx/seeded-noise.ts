// A VITS model (Piper) draws fresh noise on every run: ONNX Runtime's RandomNormalLike kernel keeps one generator
// per session, seeded from the clock, so the same sentence comes out a little different each time, and a long job
// continued by another process (or a sentence cache filled by another) could never match a run never stopped.
// Here each RandomNormalLike node of the graph is replaced by a lookup in a fixed table of standard normal values,
// drawn once from a seeded generator: the noise of a tensor depends only on its shape, as if every run were seeded
// alike. The distribution is the same; only its being new each run is gone.
//
//   RandomNormalLike(x) -> Reshape(Gather(table, Mod(Range(0, Size(x), 1), TABLE_LENGTH)), Shape(x))
//
// ONNX (onnx/onnx.proto): ModelProto.graph = 7; GraphProto.node = 1, GraphProto.initializer = 5; NodeProto.input = 1,
// output = 2, name = 3, op_type = 4, domain = 7; TensorProto.dims = 1, data_type = 2, name = 8, raw_data = 9.
// Operators of the default domain at opset 13 or later take this form (Range, Mod: 11; Gather, Reshape, Size: 13).
import { FIXED32, LENGTH_DELIMITED, MalformedMessage, VARINT, bufferSource, fieldsOf, lengthDelimited, stringFields, varintField, varintOf, type ByteSource, type Field } from './protobuf.js';

const MODEL_GRAPH = 7;
const MODEL_OPSET_IMPORT = 8;
const OPSET_DOMAIN = 1;
const OPSET_VERSION = 2;
const ATTRIBUTE_NAME = 1;
const ATTRIBUTE_FLOAT = 2;
const ATTRIBUTE_INT = 3;
const NODE_ATTRIBUTE = 5;
const GRAPH_NODE = 1;
const GRAPH_INITIALIZER = 5;
const NODE_INPUT = 1;
const NODE_OUTPUT = 2;
const NODE_NAME = 3;
const NODE_OP_TYPE = 4;
const NODE_DOMAIN = 7;
const TENSOR_DIMS = 1;
const TENSOR_DATA_TYPE = 2;
const TENSOR_NAME = 8;
const TENSOR_RAW_DATA = 9;
const FLOAT = 1;
const INT64 = 7;

/** Values in the table: 2^20 (4 MB), more than a minute of a 22 kHz voice's 192-channel latent before it repeats. */
export const TABLE_LENGTH = 1 << 20;
/** The generator's seed: any fixed number; changing it changes every seeded voice's sound (slightly). */
const SEED = 0x766f78;
const PREFIX = 'voxreel_seeded_noise';

/** How many RandomNormalLike nodes `seedNoise` replaced, and the model after. */
export interface SeededModel {
  model: Uint8Array;
  replaced: number;
}

/**
 * The model with its RandomNormalLike nodes replaced by the fixed noise table, where each is standard normal (mean 0,
 * scale 1) of float output and the model's default opset has Range and Mod (11 or later); a model without any, of an
 * older opset, or bytes that do not parse as one, come back as they were (ONNX Runtime says what is wrong with those).
 */
export function seedNoise(model: Uint8Array): SeededModel {
  try {
    return replaceRandomNormal(model);
  } catch (error) {
    if (error instanceof MalformedMessage) return { model, replaced: 0 };
    throw error;
  }
}

function replaceRandomNormal(model: Uint8Array): SeededModel {
  const source = bufferSource(model);
  if (defaultOpset(source) < 11) return { model, replaced: 0 };
  const parts: Uint8Array[] = [];
  let cursor = 0;
  let replaced = 0;
  for (const graph of fieldsOf(source).filter(({ field, wire }) => field === MODEL_GRAPH && wire === LENGTH_DELIMITED)) {
    const nodes = fieldsOf(source, graph.start, graph.end).filter(({ field, wire }) => field === GRAPH_NODE && wire === LENGTH_DELIMITED);
    const random = nodes.filter((node) => isRandomNormal(source, node));
    if (random.length === 0) continue;
    const content: Uint8Array[] = [];
    let at = graph.start;
    for (const node of random) {
      content.push(model.subarray(at, node.keyStart), ...lookupNodes(source, node, replaced));
      at = node.end;
      replaced += 1;
    }
    content.push(model.subarray(at, graph.end));
    if (replaced === random.length) content.push(...tableInitializers());
    parts.push(model.subarray(cursor, graph.keyStart), lengthDelimited(MODEL_GRAPH, Buffer.concat(content)));
    cursor = graph.end;
  }
  if (replaced === 0) return { model, replaced };
  parts.push(model.subarray(cursor));
  return { model: Buffer.concat(parts), replaced };
}

function isRandomNormal(source: ByteSource, node: Field): boolean {
  const [opType] = stringFields(source, node.start, node.end, NODE_OP_TYPE);
  const [domain = ''] = stringFields(source, node.start, node.end, NODE_DOMAIN);
  if (opType !== 'RandomNormalLike' || (domain !== '' && domain !== 'ai.onnx')) return false;
  // Standard normal floats only: what the table holds (a seed attribute is what it stands in for).
  return fieldsOf(source, node.start, node.end)
    .filter(({ field }) => field === NODE_ATTRIBUTE)
    .every((attribute) => {
      const [name] = stringFields(source, attribute.start, attribute.end, ATTRIBUTE_NAME);
      const value = (number: number, wire: number) => fieldsOf(source, attribute.start, attribute.end).find((field) => field.field === number && field.wire === wire);
      const float = value(ATTRIBUTE_FLOAT, FIXED32);
      const floatValue = float ? Buffer.from(source.read(float.start, 4)).readFloatLE(0) : 0;
      if (name === 'mean') return floatValue === 0;
      if (name === 'scale') return float !== undefined && floatValue === 1;
      if (name === 'dtype') return varintOf(source, value(ATTRIBUTE_INT, VARINT)) === FLOAT;
      return name === 'seed';
    });
}

/** The version of the default ONNX domain the model imports (0 when it names none). */
function defaultOpset(source: ByteSource): number {
  for (const opset of fieldsOf(source).filter(({ field, wire }) => field === MODEL_OPSET_IMPORT && wire === LENGTH_DELIMITED)) {
    const [domain = ''] = stringFields(source, opset.start, opset.end, OPSET_DOMAIN);
    const version = fieldsOf(source, opset.start, opset.end).find(({ field, wire }) => field === OPSET_VERSION && wire === VARINT);
    if (domain === '' || domain === 'ai.onnx') return varintOf(source, version);
  }
  return 0;
}

/** The nodes that stand for one RandomNormalLike: its output from the table, in the shape of its input. */
function lookupNodes(source: ByteSource, node: Field, index: number): Buffer[] {
  const [input] = stringFields(source, node.start, node.end, NODE_INPUT);
  const [output] = stringFields(source, node.start, node.end, NODE_OUTPUT);
  if (!input || !output) throw new MalformedMessage('a RandomNormalLike node without its input or output');
  const name = (step: string) => `${PREFIX}/${index}/${step}`;
  return [
    nodeProto('Size', [input], name('size')),
    nodeProto('Range', [`${PREFIX}/zero`, name('size'), `${PREFIX}/one`], name('index')),
    nodeProto('Mod', [name('index'), `${PREFIX}/length`], name('wrapped')),
    nodeProto('Gather', [PREFIX, name('wrapped')], name('values')),
    nodeProto('Shape', [input], name('shape')),
    nodeProto('Reshape', [name('values'), name('shape')], output),
  ];
}

function nodeProto(opType: string, inputs: string[], output: string): Buffer {
  const text = (field: number, value: string) => lengthDelimited(field, Buffer.from(value, 'utf8'));
  const body = Buffer.concat([...inputs.map((input) => text(NODE_INPUT, input)), text(NODE_OUTPUT, output), text(NODE_NAME, output), text(NODE_OP_TYPE, opType)]);
  return lengthDelimited(GRAPH_NODE, body);
}

/** The table and the int64 scalars the lookup needs, as initializers of the graph. */
function tableInitializers(): Buffer[] {
  const scalar = (name: string, value: number) => tensorProto(name, INT64, [], Buffer.from(BigInt64Array.of(BigInt(value)).buffer));
  return [scalar(`${PREFIX}/zero`, 0), scalar(`${PREFIX}/one`, 1), scalar(`${PREFIX}/length`, TABLE_LENGTH), tensorProto(PREFIX, FLOAT, [TABLE_LENGTH], noiseTable())];
}

function tensorProto(name: string, dataType: number, dims: number[], raw: Buffer): Buffer {
  const body = Buffer.concat([...dims.map((dim) => varintField(TENSOR_DIMS, dim)), varintField(TENSOR_DATA_TYPE, dataType), lengthDelimited(TENSOR_NAME, Buffer.from(name, 'utf8')), lengthDelimited(TENSOR_RAW_DATA, raw)]);
  return lengthDelimited(GRAPH_INITIALIZER, body);
}

/** TABLE_LENGTH standard normal values (Box–Muller on mulberry32 from SEED), little-endian float32: the same on every machine. */
export function noiseTable(): Buffer {
  const table = Buffer.alloc(TABLE_LENGTH * 4);
  let state = SEED;
  const uniform = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  for (let index = 0; index < TABLE_LENGTH; index += 2) {
    const radius = Math.sqrt(-2 * Math.log(1 - uniform()));
    const angle = 2 * Math.PI * uniform();
    table.writeFloatLE(radius * Math.cos(angle), index * 4);
    table.writeFloatLE(radius * Math.sin(angle), (index + 1) * 4);
  }
  return table;
}
