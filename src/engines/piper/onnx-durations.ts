// How long a Piper (VITS) model says each phoneme id, without Python and without decoding the model: the duration
// predictor's rounded-up frame counts are the output of the graph's one `Ceil` node, which exporters leave internal.
// Listing that tensor among the graph's outputs makes onnxruntime return it next to the audio.
//
// Protobuf (https://protobuf.dev/programming-guides/encoding/):
//  - "Structure of a message": a field is a varint key (field number << 3 | wire type) then its value; a
//    length-delimited value (wire type 2: strings, embedded messages) is a varint length then that many bytes.
//  - "Last one wins": an embedded message field that appears twice is merged, and its repeated fields concatenated.
// So appending `ModelProto.graph { output { name } }` after the model's last byte adds one output to its graph.
//
// ONNX (onnx/onnx.proto): ModelProto.graph = 7; GraphProto.node = 1, GraphProto.output = 12;
// NodeProto.output = 2, NodeProto.op_type = 4; ValueInfoProto.name = 1.
//
// Anything unexpected (no Ceil node or several, a malformed file) gives no durations: the voice still speaks,
// without word timings.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { LENGTH_DELIMITED, MalformedMessage, fieldsOf, lengthDelimited, stringFields, type ByteSource } from '../onnx/protobuf.js';

const MODEL_GRAPH = 7;
const GRAPH_NODE = 1;
const GRAPH_OUTPUT = 12;
const NODE_OUTPUT = 2;
const NODE_OP_TYPE = 4;
const VALUE_INFO_NAME = 1;


/** Bytes read from the file this many at a time: the node list is read whole, the weights between are skipped. */
const WINDOW_BYTES = 64 * 1024;

/** Positioned reads through one window, so the graph's small fields cost few system calls. */
class FileBytes implements ByteSource {
  private window = Buffer.alloc(0);
  private windowStart = 0;

  constructor(
    private readonly fd: number,
    readonly size: number,
  ) {}

  read(offset: number, length: number): Buffer {
    if (offset < 0 || length < 0 || offset + length > this.size) throw new MalformedMessage('field overruns the file');
    if (offset < this.windowStart || offset + length > this.windowStart + this.window.length) {
      const size = Math.min(Math.max(length, WINDOW_BYTES), this.size - offset);
      const window = Buffer.allocUnsafe(size);
      if (readSync(this.fd, window, 0, size, offset) !== size) throw new MalformedMessage('short read');
      this.window = window;
      this.windowStart = offset;
    }
    return this.window.subarray(offset - this.windowStart, offset - this.windowStart + length);
  }
}

/** What the durations output needs to know of a model: its Ceil nodes' tensors and the graph's outputs. */
function inspectGraph(bytes: FileBytes): { ceilOutputs: string[]; graphOutputs: string[] } {
  const ceilOutputs: string[] = [];
  const graphOutputs: string[] = [];
  for (const graph of fieldsOf(bytes).filter(({ field, wire }) => field === MODEL_GRAPH && wire === LENGTH_DELIMITED)) {
    for (const { field, wire, start, end } of fieldsOf(bytes, graph.start, graph.end)) {
      if (wire !== LENGTH_DELIMITED) continue;
      if (field === GRAPH_NODE && stringFields(bytes, start, end, NODE_OP_TYPE)[0] === 'Ceil') {
        ceilOutputs.push(...stringFields(bytes, start, end, NODE_OUTPUT));
      } else if (field === GRAPH_OUTPUT) {
        graphOutputs.push(...stringFields(bytes, start, end, VALUE_INFO_NAME));
      }
    }
  }
  return { ceilOutputs, graphOutputs };
}

export interface DurationsTensor {
  name: string;
  /** Already one of the graph's outputs: nothing to append. */
  isOutput: boolean;
}

/** The tensor that holds the model's frames per phoneme id, or undefined when the model is not as expected. */
export function findDurationsTensor(modelPath: string): DurationsTensor | undefined {
  const fd = openSync(modelPath, 'r');
  try {
    const { ceilOutputs, graphOutputs } = inspectGraph(new FileBytes(fd, fstatSync(fd).size));
    const [name] = ceilOutputs;
    return ceilOutputs.length === 1 && name ? { name, isOutput: graphOutputs.includes(name) } : undefined;
  } catch (error) {
    if (error instanceof MalformedMessage) return undefined;
    throw error;
  } finally {
    closeSync(fd);
  }
}

/** The bytes that, appended to a model, add `tensor` to its graph's outputs. */
export function graphOutputSuffix(tensor: string): Buffer {
  const valueInfo = lengthDelimited(VALUE_INFO_NAME, Buffer.from(tensor, 'utf8'));
  return lengthDelimited(MODEL_GRAPH, lengthDelimited(GRAPH_OUTPUT, valueInfo));
}

/** The file and `suffix` in one buffer. */
export async function readWithSuffix(file: string, suffix: Uint8Array): Promise<Uint8Array> {
  const handle = await open(file);
  try {
    const { size } = await handle.stat();
    const bytes = new Uint8Array(size + suffix.length);
    const { bytesRead } = await handle.read(bytes, 0, size, 0);
    if (bytesRead !== size) throw new Error(`${file} changed while it was read`);
    bytes.set(suffix, size);
    return bytes;
  } finally {
    await handle.close();
  }
}
