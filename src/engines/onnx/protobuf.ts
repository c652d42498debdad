// The few pieces of Protocol Buffers' wire format (https://protobuf.dev/programming-guides/encoding/) that reading
// and editing an ONNX model's graph takes: a field is a varint key (field number << 3 | wire type), then its value;
// a length-delimited value (wire type 2: strings, bytes, embedded messages) is a varint length, then that many bytes.

export const VARINT = 0;
export const FIXED64 = 1;
export const LENGTH_DELIMITED = 2;
export const FIXED32 = 5;

export class MalformedMessage extends Error {}

export function encodeVarint(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  while (rest > 0x7f) {
    bytes.push((rest % 128) | 0x80);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return bytes;
}

/** A length-delimited field: its key, length and `payload`. */
export function lengthDelimited(field: number, payload: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(encodeVarint(field * 8 + LENGTH_DELIMITED)), Buffer.from(encodeVarint(payload.length)), payload]);
}

/** A varint field (wire type 0) holding a non-negative `value`. */
export function varintField(field: number, value: number): Buffer {
  return Buffer.from([...encodeVarint(field * 8 + VARINT), ...encodeVarint(value)]);
}

/** Bytes a message is read from: a buffer in memory (bufferSource), or a file read in windows (piper/onnx-durations.ts). */
export interface ByteSource {
  readonly size: number;
  /** `length` bytes from `offset`; throws MalformedMessage past the end. */
  read(offset: number, length: number): Uint8Array;
}

export function bufferSource(bytes: Uint8Array): ByteSource {
  return {
    size: bytes.length,
    read: (offset, length) => {
      if (offset < 0 || length < 0 || offset + length > bytes.length) throw new MalformedMessage('field overruns the bytes');
      return bytes.subarray(offset, offset + length);
    },
  };
}

/** One field of a message: its number, wire type, where its key starts and where its value lies. */
export interface Field {
  field: number;
  wire: number;
  keyStart: number;
  start: number;
  end: number;
}

/** The fields of the message in bytes [from, to) of `source`, in order. */
export function fieldsOf(source: ByteSource, from = 0, to = source.size): Field[] {
  const fields: Field[] = [];
  let offset = from;
  while (offset < to) {
    const keyStart = offset;
    const [key, afterKey] = varintAt(source, offset);
    const wire = key % 8;
    let start = afterKey;
    let end: number;
    if (wire === VARINT) end = varintAt(source, start)[1];
    else if (wire === FIXED64) end = start + 8;
    else if (wire === FIXED32) end = start + 4;
    else if (wire === LENGTH_DELIMITED) {
      const [length, afterLength] = varintAt(source, start);
      start = afterLength;
      end = start + length;
    } else throw new MalformedMessage(`wire type ${wire}`);
    if (end > to) throw new MalformedMessage('field overruns its message');
    fields.push({ field: Math.floor(key / 8), wire, keyStart, start, end });
    offset = end;
  }
  return fields;
}

/** The strings (UTF-8) of field `number` of the message in [from, to). */
export function stringFields(source: ByteSource, from: number, to: number, number: number): string[] {
  return fieldsOf(source, from, to)
    .filter(({ field, wire }) => field === number && wire === LENGTH_DELIMITED)
    .map(({ start, end }) => Buffer.from(source.read(start, end - start)).toString('utf8'));
}

/** A varint field's value (0 when the field is absent). */
export function varintOf(source: ByteSource, field: Field | undefined): number {
  return field ? varintAt(source, field.start)[0] : 0;
}

/** A varint at `offset`: its value (exact below 2^53, far beyond any file) and the offset after it. */
function varintAt(source: ByteSource, offset: number): [number, number] {
  const head = source.read(offset, Math.min(10, source.size - offset));
  let value = 0;
  let scale = 1;
  for (let index = 0; index < head.length; index++) {
    const byte = head[index] ?? 0;
    value += (byte & 0x7f) * scale;
    if ((byte & 0x80) === 0) return [value, offset + index + 1];
    scale *= 128;
  }
  throw new MalformedMessage('unterminated varint');
}
