import { readFile } from 'node:fs/promises';
import type { Static, TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/**
 * A JSON record kept beside what it describes (an asset, a lexicon): undefined when it is missing, damaged, not of
 * `schema`, or not the record of `id` (a file copied under another name is not trusted).
 */
export async function readRecord<T extends TSchema>(file: string, schema: T, id: string): Promise<Static<T> | undefined> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const record: unknown = JSON.parse(text);
    return Value.Check(schema, record) && (record as { id?: unknown }).id === id ? record : undefined;
  } catch {
    return undefined;
  }
}
