// One ONNX model cut in two at a tensor, so a caller can run the second part on pieces of that tensor: the front
// computes it (and the graph's other outputs), the back takes it as its input and computes the named outputs.
// Piper's voices use it to decode their latent speech in windows (piper/decoder-windows.ts).
//
// ONNX (onnx/onnx.proto): ModelProto.graph = 7; GraphProto.node = 1, initializer = 5, input = 11, output = 12,
// value_info = 13; NodeProto.input = 1, output = 2, attribute = 5; AttributeProto.g = 6, graphs = 11;
// TensorProto.name = 8; ValueInfoProto.name = 1, type = 2; TypeProto.tensor_type = 1; TypeProto.Tensor.elem_type = 1.
// A graph given in several ModelProto.graph fields is one graph, its repeated fields concatenated ("last one wins"
// merging of protobuf): the durations output appended to a model file (piper/onnx-durations.ts) is read as such.
import { LENGTH_DELIMITED, bufferSource, fieldsOf, lengthDelimited, stringFields, varintField, type ByteSource, type Field } from './protobuf.js';

const MODEL_GRAPH = 7;
const GRAPH_NODE = 1;
const GRAPH_INITIALIZER = 5;
const GRAPH_INPUT = 11;
const GRAPH_OUTPUT = 12;
const GRAPH_VALUE_INFO = 13;
const NODE_INPUT = 1;
const NODE_OUTPUT = 2;
const NODE_OP_TYPE = 4;
const NODE_ATTRIBUTE = 5;
const ATTRIBUTE_GRAPH = 6;
const ATTRIBUTE_GRAPHS = 11;
const TENSOR_NAME = 8;
const VALUE_INFO_NAME = 1;
const VALUE_INFO_TYPE = 2;
const TYPE_TENSOR = 1;
const TENSOR_ELEM_TYPE = 1;
const FLOAT = 1;

/** A node of the graph as its wiring: what it is, what it reads and writes, and where its bytes lie. */
export interface GraphNode {
  opType: string;
  inputs: string[];
  outputs: string[];
  field: Field;
}

/** A model's graph read once (readModelGraph): its nodes' wiring, and where each of its fields lies in the bytes. */
export interface ModelGraph {
  source: ByteSource;
  bytes: Uint8Array;
  /** The model's fields other than its graph, as they were. */
  modelFields: Field[];
  /** The graph's fields other than nodes, initializers, inputs, outputs and value_info, as they were. */
  otherFields: Field[];
  nodes: GraphNode[];
  initializers: Map<string, Field>;
  inputs: Map<string, Field>;
  outputs: Map<string, Field>;
  valueInfo: Map<string, Field>;
}

/** The graph of a model's bytes (bytes that do not parse throw MalformedMessage). */
export function readModelGraph(bytes: Uint8Array): ModelGraph {
  const source = bufferSource(bytes);
  const graph: ModelGraph = { source, bytes, modelFields: [], otherFields: [], nodes: [], initializers: new Map(), inputs: new Map(), outputs: new Map(), valueInfo: new Map() };
  const named = (field: Field, number: number) => stringFields(source, field.start, field.end, number)[0] ?? '';
  for (const modelField of fieldsOf(source)) {
    if (modelField.field !== MODEL_GRAPH || modelField.wire !== LENGTH_DELIMITED) {
      graph.modelFields.push(modelField);
      continue;
    }
    for (const field of fieldsOf(source, modelField.start, modelField.end)) {
      if (field.wire !== LENGTH_DELIMITED) graph.otherFields.push(field);
      else if (field.field === GRAPH_NODE) {
        graph.nodes.push({
          opType: named(field, NODE_OP_TYPE),
          inputs: stringFields(source, field.start, field.end, NODE_INPUT),
          outputs: stringFields(source, field.start, field.end, NODE_OUTPUT),
          field,
        });
      } else if (field.field === GRAPH_INITIALIZER) graph.initializers.set(named(field, TENSOR_NAME), field);
      else if (field.field === GRAPH_INPUT) graph.inputs.set(named(field, VALUE_INFO_NAME), field);
      else if (field.field === GRAPH_OUTPUT) graph.outputs.set(named(field, VALUE_INFO_NAME), field);
      else if (field.field === GRAPH_VALUE_INFO) graph.valueInfo.set(named(field, VALUE_INFO_NAME), field);
      else graph.otherFields.push(field);
    }
  }
  return graph;
}

/** Nodes with a subgraph (If, Loop, Scan) read tensors their inputs do not name: a cut could not see those. */
function hasSubgraph(graph: ModelGraph, node: GraphNode): boolean {
  return fieldsOf(graph.source, node.field.start, node.field.end)
    .filter(({ field }) => field === NODE_ATTRIBUTE)
    .some((attribute) => fieldsOf(graph.source, attribute.start, attribute.end).some(({ field }) => field === ATTRIBUTE_GRAPH || field === ATTRIBUTE_GRAPHS));
}

/** The nodes (indexes, in graph order) that `wanted` needs, not looking past the tensors in `stop`; and the graph inputs reached. */
function needed(graph: ModelGraph, wanted: readonly string[], stop: ReadonlySet<string>): { nodes: number[]; inputs: Set<string> } {
  const producer = new Map<string, number>();
  graph.nodes.forEach((node, index) => node.outputs.forEach((output) => producer.set(output, index)));
  const nodes = new Set<number>();
  const inputs = new Set<string>();
  const seen = new Set<string>();
  const pending = [...wanted];
  while (pending.length > 0) {
    const tensor = pending.pop() as string;
    if (seen.has(tensor) || tensor === '' || stop.has(tensor) || graph.initializers.has(tensor)) continue;
    seen.add(tensor);
    const index = producer.get(tensor);
    if (index === undefined) {
      if (graph.inputs.has(tensor)) inputs.add(tensor);
      continue;
    }
    nodes.add(index);
    pending.push(...(graph.nodes[index] as GraphNode).inputs);
  }
  return { nodes: [...nodes].sort((a, b) => a - b), inputs };
}

/** A graph input or output of float elements and any shape, known by name only. */
function floatValueInfo(name: string, field: number): Buffer {
  const tensorType = lengthDelimited(TYPE_TENSOR, varintField(TENSOR_ELEM_TYPE, FLOAT));
  return lengthDelimited(field, Buffer.concat([lengthDelimited(VALUE_INFO_NAME, Buffer.from(name, 'utf8')), lengthDelimited(VALUE_INFO_TYPE, tensorType)]));
}

/** A model of `graph`'s other fields with these nodes, the initializers and value_info they use, and these inputs and outputs. */
function partModel(graph: ModelGraph, nodeIndexes: readonly number[], inputs: readonly Uint8Array[], outputs: readonly Uint8Array[]): Uint8Array {
  const field = ({ keyStart, end }: Field) => graph.bytes.subarray(keyStart, end);
  const nodes = nodeIndexes.map((index) => graph.nodes[index] as GraphNode);
  const tensors = new Set(nodes.flatMap((node) => [...node.inputs, ...node.outputs]));
  const initializers = [...graph.initializers].filter(([name]) => tensors.has(name)).map(([, initializer]) => field(initializer));
  const valueInfo = [...graph.valueInfo].filter(([name]) => tensors.has(name)).map(([, info]) => field(info));
  const body = Buffer.concat([...nodes.map((node) => field(node.field)), ...graph.otherFields.map(field), ...initializers, ...inputs, ...outputs, ...valueInfo]);
  return Buffer.concat([...graph.modelFields.map(field), lengthDelimited(MODEL_GRAPH, body)]);
}

export interface SplitModel {
  /** The graph's inputs in, `at` and the graph's outputs other than the back's out. */
  front: Uint8Array;
  /** `at` (float) and the graph inputs the back reads in, `backOutputs` out. */
  back: Uint8Array;
}

/**
 * The model cut at the float tensor `at`: the back holds what `backOutputs` need past `at`, the front the rest. None
 * when the cut would not stand: `at` or an output unknown, a subgraph anywhere, the back needing any tensor the front
 * computes other than `at`, or the back holding most of the graph (nothing gained).
 */
export function splitGraph(graph: ModelGraph, at: string, backOutputs: readonly string[]): SplitModel | undefined {
  if (!graph.nodes.some((node) => node.outputs.includes(at)) || backOutputs.some((output) => !graph.outputs.has(output))) return undefined;
  if (graph.nodes.some((node) => hasSubgraph(graph, node))) return undefined;
  const frontOutputs = [...graph.outputs.keys()].filter((output) => !backOutputs.includes(output));
  const front = needed(graph, [at, ...frontOutputs], new Set());
  const back = needed(graph, backOutputs, new Set([at]));
  const frontNodes = new Set(front.nodes);
  if (back.nodes.some((index) => frontNodes.has(index)) || back.nodes.length * 2 > graph.nodes.length) return undefined;
  const field = ({ keyStart, end }: Field) => graph.bytes.subarray(keyStart, end);
  const copied = (names: Iterable<string>, from: Map<string, Field>) => [...names].map((name) => field(from.get(name) as Field));
  return {
    front: partModel(graph, front.nodes, copied(graph.inputs.keys(), graph.inputs), [floatValueInfo(at, GRAPH_OUTPUT), ...copied(frontOutputs, graph.outputs)]),
    back: partModel(graph, back.nodes, [floatValueInfo(at, GRAPH_INPUT), ...copied(back.inputs, graph.inputs)], copied(backOutputs, graph.outputs)),
  };
}
