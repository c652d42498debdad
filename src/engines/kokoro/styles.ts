// Style vectors from pack files (packs.ts): each file read once per host, a blend's row made anew per inference.
import { readFile } from 'node:fs/promises';
import { PACK_BYTES, PACK_ROWS, STYLE_SIZE } from './packs.js';
import type { StylePart } from './protocol.js';

const packs = new Map<string, Promise<Float32Array>>();

/** A pack's floats; a file of another size is no pack (refused, and read again next time). */
export function readPack(file: string): Promise<Float32Array> {
  let pack = packs.get(file);
  if (!pack) {
    pack = readFile(file).then((bytes) => {
      if (bytes.length !== PACK_BYTES) throw new Error(`${file} has ${bytes.length} bytes, not a voice pack's ${PACK_BYTES}`);
      return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    });
    pack.catch(() => packs.delete(file));
    packs.set(file, pack);
  }
  return pack;
}

/** A voice's rows for every token count: each pack's row weighted by its share (kokoro-js and Kokoro use row count - 1). */
export async function styleOf(parts: readonly StylePart[]): Promise<(tokens: number) => Float32Array> {
  const loaded = await Promise.all(parts.map(async ({ file, weight }) => ({ pack: await readPack(file), weight })));
  return (tokens) => {
    const row = Math.min(Math.max(tokens, 1), PACK_ROWS) - 1;
    const style = new Float32Array(STYLE_SIZE);
    for (const { pack, weight } of loaded) {
      for (let index = 0; index < STYLE_SIZE; index++) style[index] = (style[index] ?? 0) + weight * (pack[row * STYLE_SIZE + index] ?? 0);
    }
    return style;
  };
}
