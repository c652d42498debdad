// Wyoming's framing (github.com/OHF-Voice/wyoming, wyoming/event.py): each event is a JSON line (`type`, `version`,
// and `data`, or `data_length`), then `data_length` bytes of JSON data, then `payload_length` bytes of payload.
// Read here one event at a time, each part's length checked against its type's bound as soon as the header says it,
// so a peer can neither hold unbounded memory nor make the server read (or parse) more than an event may carry.

export interface WyomingEvent {
  type: string;
  data: Record<string, unknown>;
  payload?: Buffer;
}

/** The protocol version voxreel speaks (wyoming 1.10). */
export const WYOMING_VERSION = '1.10.2';

/** How much of each part an event of a type may carry. */
export interface EventBounds {
  data: number;
  payload: number;
}

/** The framing's own bounds, for any type; a server reads its own types with tighter ones. */
export const LIMITS = { line: 64 * 1024, data: 64 * 1024, payload: 1024 * 1024 } as const;

/** What is refused: `code` is the `error` event's (`protocol`, `unsupported-event`, `too-long`). */
export class WyomingProtocolError extends Error {
  constructor(
    message: string,
    readonly code = 'protocol',
  ) {
    super(message);
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export interface ReaderOptions {
  /** Longest header line. */
  line: number;
  /** The bounds of a type's data and payload; a throw refuses the type before its data is read. */
  bounds(type: string): EventBounds;
}

const ANY_TYPE: ReaderOptions = { line: LIMITS.line, bounds: () => LIMITS };

/** Events out of a byte stream, one at a time; throws WyomingProtocolError on what is not an event or passes a bound. */
export class EventReader {
  private buffer: Buffer = Buffer.alloc(0);
  private pending: { event: WyomingEvent; dataLength: number; payloadLength: number } | undefined;

  constructor(private readonly options: ReaderOptions = ANY_TYPE) {}

  /** Whether part of an event has come and the rest not yet. */
  get partial(): boolean {
    return this.buffer.length > 0 || this.pending !== undefined;
  }

  write(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
  }

  /** The next whole event, or undefined until more bytes come; a header over its bounds throws before its data is read. */
  next(): WyomingEvent | undefined {
    if (!this.pending) {
      const end = this.buffer.indexOf(0x0a);
      if ((end === -1 ? this.buffer.length : end) > this.options.line) throw new WyomingProtocolError(`an event's header line is longer than ${this.options.line} bytes`);
      if (end === -1) return undefined;
      this.pending = this.header(this.buffer.subarray(0, end));
      this.buffer = this.buffer.subarray(end + 1);
    }
    const { event, dataLength, payloadLength } = this.pending;
    if (this.buffer.length < dataLength + payloadLength) return undefined;
    if (dataLength > 0) Object.assign(event.data, parse(this.buffer.subarray(0, dataLength), 'data'));
    if (payloadLength > 0) event.payload = Buffer.from(this.buffer.subarray(dataLength, dataLength + payloadLength));
    this.buffer = this.buffer.subarray(dataLength + payloadLength);
    this.pending = undefined;
    return event;
  }

  private header(line: Buffer): { event: WyomingEvent; dataLength: number; payloadLength: number } {
    const parsed = parse(line, 'header');
    if (typeof parsed.type !== 'string' || parsed.type === '') throw new WyomingProtocolError('an event has no type');
    const bounds = this.options.bounds(parsed.type);
    const length = (key: string, max: number) => {
      const value = parsed[key] ?? 0;
      if (!Number.isInteger(value) || (value as number) < 0) throw new WyomingProtocolError(`${key} is not a length`);
      if ((value as number) > max) throw new WyomingProtocolError(`${parsed.type as string}: ${key} is over ${max} bytes`, 'too-long');
      return value as number;
    };
    const data = parsed.data === undefined ? {} : parsed.data;
    if (!isRecord(data)) throw new WyomingProtocolError("the event's data is not a JSON object");
    return { event: { type: parsed.type, data: { ...data } }, dataLength: length('data_length', bounds.data), payloadLength: length('payload_length', bounds.payload) };
  }
}

function parse(bytes: Buffer, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new WyomingProtocolError(`the event's ${what} is not JSON`);
  }
  if (!isRecord(value)) throw new WyomingProtocolError(`the event's ${what} is not a JSON object`);
  return value;
}

/** An event as Wyoming writes it: the header line, the data, the payload. */
export function encodeEvent(type: string, data?: Record<string, unknown>, payload?: Buffer): Buffer {
  const dataBytes = data && Object.keys(data).length > 0 ? Buffer.from(JSON.stringify(data), 'utf8') : undefined;
  const head: Record<string, unknown> = { type, version: WYOMING_VERSION };
  if (dataBytes) head.data_length = dataBytes.length;
  if (payload && payload.length > 0) head.payload_length = payload.length;
  return Buffer.concat([Buffer.from(`${JSON.stringify(head)}\n`, 'utf8'), ...(dataBytes ? [dataBytes] : []), ...(payload && payload.length > 0 ? [payload] : [])]);
}
