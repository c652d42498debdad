import { open } from 'node:fs/promises';

/** Reads `length` bytes from `position` (fewer at the end of the file). */
export type ReadRange = (position: number, length: number) => Promise<Buffer>;

/** Opens `file`, hands `use` a reader of its byte ranges and its size, and closes it after (headers read without a process). */
export async function withFileRanges<T>(file: string, use: (read: ReadRange, size: number) => Promise<T>): Promise<T> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    return await use(async (position, length) => {
      const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - position)));
      await handle.read(buffer, 0, buffer.length, position);
      return buffer;
    }, size);
  } finally {
    await handle.close();
  }
}
