// docs/api.md's field tables held against the contract's schemas: a field added to a request or to a voice and not
// documented (or documented and gone) fails here, so the schemas stay the one source of what the API takes.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TObject } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { SpeechRequest } from '../../src/api/openai.js';
import { TtsRequest } from '../../src/api/speech.js';
import { TtsVideoRequest } from '../../src/api/video.js';
import { Voice } from '../../src/api/voices.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const apiDocs = readFileSync(path.join(root, 'docs/api.md'), 'utf8');

/** The fields named in the first cell of the first table under `heading` (until the next heading of its level or above). */
function documentedFields(heading: string): string[] {
  const start = apiDocs.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`docs/api.md has no heading ${heading}`);
  const level = heading.split(' ')[0]!;
  const rest = apiDocs.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`^#{1,${level.length}} `, 'm'));
  const section = end === -1 ? rest : rest.slice(0, end);
  const table = section.slice(section.indexOf('\n|')).split('\n\n')[0]!;
  const rows = table.split('\n').filter((line) => line.startsWith('| `'));
  return rows.flatMap((row) => [...row.split(' | ')[0]!.matchAll(/`([A-Za-z_]+)`/g)].map(([, name]) => name!));
}

const fieldsOf = (schema: TObject) => Object.keys(schema.properties).sort();

describe('docs/api.md documents every field of the contract, and only those', () => {
  it.each([
    ['## `GET /voices`', Voice],
    ['## `POST /tts`', TtsRequest],
    ['## `POST /tts-video`', TtsVideoRequest],
    ['### `POST /v1/audio/speech`', SpeechRequest],
  ] as const)('%s', (heading, schema) => {
    expect(documentedFields(heading).sort()).toEqual(fieldsOf(schema as TObject));
  });

  it('reads a table as the docs write it: several fields in one row, an inline code in the meaning left alone', () => {
    expect(documentedFields('## `POST /tts-video`')).toEqual(expect.arrayContaining(['caption_color', 'highlight_color']));
    expect(documentedFields('## `GET /voices`')).not.toContain('en-US');
  });
});
