import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** The path of a file in fixtures/ (small programs that hang, crash or answer garbage on purpose). */
export const fixture = (name: string) => fileURLToPath(new URL(`../../fixtures/${name}`, import.meta.url));

/** The first chapters of Alice's Adventures in Wonderland (public domain; fixtures/alice-chapters-1-8.txt), cut at the last sentence within `characters`. */
export async function aliceText(characters: number): Promise<string> {
  const text = await readFile(fixture('alice-chapters-1-8.txt'), 'utf8');
  const cut = text.slice(0, characters);
  return cut.slice(0, cut.lastIndexOf('.') + 1);
}
