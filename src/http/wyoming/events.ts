// Wyoming's framing (github.com/OHF-Voice/wyoming, wyoming/event.py): each event is a JSON line (`type`, `version`,
// and `data`, or `data_length`), then `data_length` bytes of JSON data, then `payload_length` bytes of payload.
// Read here with bounds on each part, so a peer can neither hold unbounded memory nor send a line that never ends.

export interface WyomingEvent {
  type: string;
  data: Record<string, unknown>;
  payload?: Buffer;
}

/** The protocol version voxreel speaks (wyoming 1.10). */
export const WYOMING_VERSION = '1.10.2';

export const LIMITS = { line: 64 * 1024, data: 64 * 1024, payload: 1024 * 1024 } as const;

export class WyomingProtocolError extends Error {}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Events out of a byte stream, as they arrive; throws WyomingProtocolError on what is not an event or passes a bound. */
export class EventReader {
  private buffer: Buffer = Buffer.alloc(0);
  private pending: { event: WyomingEvent; dataLength: number; payloadLength: number } | undefined;

  push(chunk: Buffer): WyomingEvent[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const events: WyomingEvent[] = [];
    for (;;) {
      if (!this.pending) {
        const end = this.buffer.indexOf(0x0a);
        if (end === -1) {
          if (this.buffer.length > LIMITS.line) throw new WyomingProtocolError(`an event's header line is longer than ${LIMITS.line} bytes`);
          return events;
        }
        this.pending = header(this.buffer.subarray(0, end));
        this.buffer = this.buffer.subarray(end + 1);
      }
      const { event, dataLength, payloadLength } = this.pending;
      if (this.buffer.length < dataLength + payloadLength) return events;
      if (dataLength > 0) {
        const data = parse(this.buffer.subarray(0, dataLength), 'data');
        Object.assign(event.data, data);
      }
      if (payloadLength > 0) event.payload = Buffer.from(this.buffer.subarray(dataLength, dataLength + payloadLength));
      this.buffer = this.buffer.subarray(dataLength + payloadLength);
      this.pending = undefined;
      events.push(event);
    }
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

function header(line: Buffer): { event: WyomingEvent; dataLength: number; payloadLength: number } {
  const parsed = parse(line, 'header');
  if (typeof parsed.type !== 'string' || parsed.type === '') throw new WyomingProtocolError('an event has no type');
  const length = (key: string, max: number) => {
    const value = parsed[key] ?? 0;
    if (!Number.isInteger(value) || (value as number) < 0) throw new WyomingProtocolError(`${key} is not a length`);
    if ((value as number) > max) throw new WyomingProtocolError(`${key} is over ${max} bytes`);
    return value as number;
  };
  const data = parsed.data === undefined ? {} : parsed.data;
  if (!isRecord(data)) throw new WyomingProtocolError("the event's data is not a JSON object");
  return { event: { type: parsed.type, data: { ...data } }, dataLength: length('data_length', LIMITS.data), payloadLength: length('payload_length', LIMITS.payload) };
}

/** An event as Wyoming writes it: the header line, the data, the payload. */
export function encodeEvent(type: string, data?: Record<string, unknown>, payload?: Buffer): Buffer {
  const dataBytes = data && Object.keys(data).length > 0 ? Buffer.from(JSON.stringify(data), 'utf8') : undefined;
  const head: Record<string, unknown> = { type, version: WYOMING_VERSION };
  if (dataBytes) head.data_length = dataBytes.length;
  if (payload && payload.length > 0) head.payload_length = payload.length;
  return Buffer.concat([Buffer.from(`${JSON.stringify(head)}\n`, 'utf8'), ...(dataBytes ? [dataBytes] : []), ...(payload && payload.length > 0 ? [payload] : [])]);
}
