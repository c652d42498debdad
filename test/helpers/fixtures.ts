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

/** The same, its chapters' headings ("CHAPTER I", then the title) as Markdown headings ("# Chapter I: Down the Rabbit-Hole"): a text with chapters. */
export async function aliceChapters(characters: number): Promise<string> {
  return (await aliceText(characters)).replace(/^[ \t]*CHAPTER ([IVXL]+)\.?[ \t]*\n\s*\n[ \t]*(\S[^\n]*?)[ \t]*$/gmu, '# Chapter $1: $2');
}
