/**
 * Bits of H.264: Exp-Golomb codes, NAL units in an Annex B byte stream, and the emulation prevention that
 * turns a NAL unit's payload into its RBSP and back. Section numbers are those of ITU-T H.264.
 */

export class H264Error extends Error {
  override name = 'H264Error';
}

export class BitReader {
  position = 0;

  constructor(readonly bytes: Uint8Array) {}

  bit(): number {
    const byte = this.bytes[this.position >> 3];
    if (byte === undefined) throw new H264Error('Unexpected end of a NAL unit');
    const value = (byte >> (7 - (this.position & 7))) & 1;
    this.position += 1;
    return value;
  }

  bits(count: number): number {
    let value = 0;
    for (let i = 0; i < count; i += 1) value = value * 2 + this.bit();
    return value;
  }

  /** ue(v), 9.1: leading zeros, a 1, then as many bits. */
  ue(): number {
    let zeros = 0;
    while (this.bit() === 0) {
      zeros += 1;
      if (zeros > 31) throw new H264Error('Malformed Exp-Golomb code');
    }
    return 2 ** zeros - 1 + this.bits(zeros);
  }

  /** se(v), 9.1.1: codes 1, 2, 3, 4… stand for 1, −1, 2, −2… */
  se(): number {
    const code = this.ue();
    return code % 2 === 1 ? (code + 1) / 2 : -code / 2;
  }

  /** Position of the rbsp_stop_one_bit (7.3.2.11): the last 1 bit of the RBSP. */
  stopBit(): number {
    for (let index = this.bytes.length - 1; index >= 0; index -= 1) {
      const byte = this.bytes[index] as number;
      if (byte !== 0) return index * 8 + 7 - Math.log2(byte & -byte);
    }
    throw new H264Error('A NAL unit has no stop bit');
  }
}

export class BitWriter {
  private bytes = new Uint8Array(64);
  private length = 0;

  private reserve(bits: number): void {
    const needed = (this.length + bits + 7) >> 3;
    if (needed <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(needed, this.bytes.length * 2));
    grown.set(this.bytes);
    this.bytes = grown;
  }

  bits(value: number, count: number): this {
    this.reserve(count);
    for (let i = count - 1; i >= 0; i -= 1) {
      if (Math.floor(value / 2 ** i) & 1) this.bytes[this.length >> 3] = (this.bytes[this.length >> 3] as number) | (0x80 >> (this.length & 7));
      this.length += 1;
    }
    return this;
  }

  /** ue(v), 9.1. */
  ue(value: number): this {
    const code = value + 1;
    const length = Math.floor(Math.log2(code)) + 1;
    return this.bits(0, length - 1).bits(code, length);
  }

  /** se(v), 9.1.1. */
  se(value: number): this {
    return this.ue(value > 0 ? 2 * value - 1 : -2 * value);
  }

  /**
   * Appends bits [from, to) of `source`, a byte at a time (CAVLC slice data needs no byte alignment, 7.3.4), or in
   * one copy where both sides happen to be on a byte boundary.
   */
  copy(source: Uint8Array, from: number, to: number): this {
    this.reserve(to - from);
    const whole = (to - from) >> 3;
    const shift = from & 7;
    const offset = this.length & 7;
    const bytes = this.bytes;
    let read = from >> 3;
    let at = this.length >> 3;
    if (shift === 0 && offset === 0) {
      bytes.set(source.subarray(read, read + whole), at);
    } else {
      for (const end = read + whole; read < end; read += 1, at += 1) {
        const byte = shift === 0 ? (source[read] as number) : (((source[read] as number) << shift) | ((source[read + 1] ?? 0) >> (8 - shift))) & 0xff;
        bytes[at] = (bytes[at] as number) | (byte >> offset);
        if (offset > 0) bytes[at + 1] = (byte << (8 - offset)) & 0xff;
      }
    }
    this.length += whole * 8;
    const position = from + whole * 8;
    const reader = new BitReader(source);
    reader.position = position;
    return this.bits(reader.bits(to - position), to - position);
  }

  /** rbsp_trailing_bits (7.3.2.11): a stop bit, then zeros to the byte boundary. */
  toRbsp(): Uint8Array {
    this.bits(1, 1);
    return this.bytes.subarray(0, (this.length + 7) >> 3);
  }
}

/** The NAL units of an Annex B byte stream (B.1: each after a 00 00 01 start code), without their start codes. */
export function splitNalUnits(stream: Uint8Array): Uint8Array[] {
  const starts: number[] = [];
  for (let i = 0; i + 2 < stream.length; i += 1) {
    if (stream[i + 2]! > 1) {
      i += 2; // no start code can begin at i, i + 1 or i + 2
    } else if (stream[i] === 0 && stream[i + 1] === 0 && stream[i + 2] === 1) {
      starts.push(i + 3);
      i += 2;
    }
  }
  return starts.map((start, index) => {
    let end = index + 1 < starts.length ? (starts[index + 1] as number) - 3 : stream.length;
    while (end > start && stream[end - 1] === 0) end -= 1; // trailing zeros belong to the next start code (B.1: trailing_zero_8bits)
    return stream.subarray(start, end);
  });
}

/**
 * Calls `atPair` with the index of each byte that follows two zero bytes (00 00 xx), found by jumping from zero byte
 * to zero byte (indexOf: slice data is mostly other bytes); `atPair` answers where to look for the next pair.
 */
function forEachAfterZeroPair(bytes: Uint8Array, from: number, atPair: (index: number) => number): void {
  let search = from;
  for (;;) {
    const zero = bytes.indexOf(0, search);
    if (zero === -1 || zero + 2 >= bytes.length) return;
    search = bytes[zero + 1] === 0 ? atPair(zero + 2) : zero + 2;
  }
}

/** NAL unit → RBSP (7.3.1, 7.4.1): drops the header byte and each emulation_prevention_three_byte (00 00 03). */
export function toRbsp(nal: Uint8Array): Uint8Array {
  const out = new Uint8Array(nal.length);
  let length = 0;
  let from = 1;
  forEachAfterZeroPair(nal, 1, (index) => {
    // 00 00 00: the second zero may start the next pair.
    if (nal[index] !== 3) return index - 1;
    out.set(nal.subarray(from, index), length);
    length += index - from;
    from = index + 1;
    return from;
  });
  out.set(nal.subarray(from), length);
  return out.subarray(0, length + nal.length - from);
}

/** Header byte + RBSP → NAL unit (7.4.1): a 03 after two zeros wherever 00 00 0x (x ≤ 3) would occur. */
export function toNal(header: number, rbsp: Uint8Array): Uint8Array {
  const out = new Uint8Array(rbsp.length + Math.ceil(rbsp.length / 2) + 1);
  out[0] = header;
  let length = 1;
  let from = 0;
  forEachAfterZeroPair(rbsp, 0, (index) => {
    if ((rbsp[index] as number) > 3) return index + 1;
    out.set(rbsp.subarray(from, index), length);
    length += index - from;
    out[length++] = 3;
    from = index;
    return index;
  });
  out.set(rbsp.subarray(from), length);
  return out.subarray(0, length + rbsp.length - from);
}
