export interface PcmAudio {
  samples: Int16Array;
  sampleRate: number;
}

/** Decodes a mono 16-bit PCM RIFF/WAVE file, the only kind the engines write. */
export function decodeWav(file: Uint8Array): PcmAudio {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const tag = (offset: number) => String.fromCharCode(...file.subarray(offset, offset + 4));
  if (file.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new Error('not a WAV file');
  let sampleRate: number | undefined;
  let offset = 12;
  while (offset + 8 <= file.length) {
    const id = tag(offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'fmt ') {
      const format = view.getUint16(body, true);
      const channels = view.getUint16(body + 2, true);
      const bits = view.getUint16(body + 14, true);
      if (format !== 1 || channels !== 1 || bits !== 16) {
        throw new Error(`unsupported WAV format ${format}, ${channels} channels, ${bits} bits`);
      }
      sampleRate = view.getUint32(body + 4, true);
    } else if (id === 'data') {
      if (sampleRate === undefined) throw new Error('WAV data before its format');
      // Streaming writers may leave the size unset; take what is there.
      const end = Math.min(file.length, body + size);
      const samples = new Int16Array(Math.floor((end - body) / 2));
      for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(body + i * 2, true);
      return { samples, sampleRate };
    }
    offset = body + size + (size % 2);
  }
  throw new Error('WAV file without data');
}

export function isPcmAudio(value: unknown): value is PcmAudio {
  return (
    typeof value === 'object' &&
    value !== null &&
    'samples' in value &&
    value.samples instanceof Int16Array &&
    'sampleRate' in value &&
    typeof value.sampleRate === 'number' &&
    value.sampleRate > 0
  );
}

/** The pieces of a recording, in order, as one run of samples. */
export function concatSamples(pieces: readonly Int16Array[]): Int16Array {
  const samples = new Int16Array(pieces.reduce((total, piece) => total + piece.length, 0));
  let offset = 0;
  for (const piece of pieces) {
    samples.set(piece, offset);
    offset += piece.length;
  }
  return samples;
}
