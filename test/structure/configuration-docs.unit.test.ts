import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { TSchema } from '@sinclair/typebox';
import { EnvSchema } from '../../src/config.js';

/**
 * docs/configuration.md against the config schema: every variable of EnvSchema is in one of its tables, every
 * variable its tables name is in EnvSchema, and a literal default the docs state is the schema's.
 */
const DOC = 'docs/configuration.md';
const docText = readFileSync(new URL(`../../${DOC}`, import.meta.url), 'utf8');

/** A variable name as a table's first column gives it: `NAME`, or a family `PREFIX_*`. */
const VARIABLE = /^[A-Z][A-Z0-9_]*\*?$/;

interface Row {
  line: number;
  /** The names (or `PREFIX_*` families) in the first column. */
  names: string[];
  /** The default column's cell, when the table has one. */
  defaultCell?: string;
}

function cells(line: string): string[] {
  return line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((cell) => cell.trim());
}

function backticked(cell: string): string[] {
  return [...cell.matchAll(/`([^`]*)`/g)].map((match) => match[1] ?? '');
}

/** Rows of every table whose header's first cell is "variable", outside code blocks. */
function tableRows(markdown: string): { rows: Row[]; malformed: string[] } {
  const rows: Row[] = [];
  const malformed: string[] = [];
  let inFence = false;
  // The table being read: null between tables; `variables` false for a table of something else.
  let table: { variables: boolean; defaultColumn: number } | null = null;
  markdown.split('\n').forEach((line, index) => {
    if (line.startsWith('```')) inFence = !inFence;
    if (inFence || !line.trim().startsWith('|')) {
      table = null;
      return;
    }
    const row = cells(line);
    if (table === null) {
      const header = row.map((cell) => cell.toLowerCase());
      table = { variables: header[0] === 'variable', defaultColumn: header.indexOf('default') };
      return;
    }
    if (!table.variables || /^[-:| ]+$/.test(line.trim())) return;
    const names = backticked(row[0] ?? '');
    if (names.length === 0 || names.some((name) => !VARIABLE.test(name))) malformed.push(`line ${index + 1}: ${row[0] ?? ''}`);
    rows.push({
      line: index + 1,
      names: names.filter((name) => VARIABLE.test(name)),
      defaultCell: table.defaultColumn >= 0 ? row[table.defaultColumn] : undefined,
    });
  });
  return { rows, malformed };
}

function covers(documented: string, variable: string): boolean {
  return documented.endsWith('*') ? variable.startsWith(documented.slice(0, -1)) : documented === variable;
}

const schemaVariables = Object.keys(EnvSchema.properties).sort();
const { rows, malformed } = tableRows(docText);
const documented = [...new Set(rows.flatMap((row) => row.names))].sort();

describe(`${DOC} against EnvSchema (src/config.ts)`, () => {
  it('has tables of variables, each first cell naming variables in backticks', () => {
    expect(rows.length).toBeGreaterThan(0);
    expect(malformed, `${DOC}: first cells that are not variable names`).toEqual([]);
  });

  it('documents every variable of EnvSchema', () => {
    const undocumented = schemaVariables.filter((variable) => !documented.some((name) => covers(name, variable)));
    expect(undocumented, `EnvSchema variables missing from the tables of ${DOC}`).toEqual([]);
  });

  it('documents no variable EnvSchema does not have', () => {
    const unknown = documented.filter((name) => !schemaVariables.some((variable) => covers(name, variable)));
    expect(unknown, `variables in ${DOC} that EnvSchema does not have`).toEqual([]);
  });

  it('states the schema default where it gives one literal value', () => {
    const properties: Record<string, TSchema> = EnvSchema.properties;
    const mismatches: string[] = [];
    let checked = 0;
    for (const row of rows) {
      const [name] = row.names;
      if (row.names.length !== 1 || name === undefined || name.endsWith('*') || row.defaultCell === undefined) continue;
      const literals = backticked(row.defaultCell);
      const schemaDefault: unknown = properties[name]?.default;
      // Only a single literal in the docs against a literal in the schema; computed defaults are described in words.
      if (literals.length !== 1 || !['string', 'number', 'boolean'].includes(typeof schemaDefault)) continue;
      const literal = literals[0] ?? '';
      const same = typeof schemaDefault === 'number' ? literal.trim() !== '' && Number(literal) === schemaDefault : literal === String(schemaDefault);
      checked += 1;
      if (!same) mismatches.push(`${name}: ${DOC} line ${row.line} says \`${literal}\`, EnvSchema says ${JSON.stringify(schemaDefault)}`);
    }
    expect(mismatches, 'defaults that differ').toEqual([]);
    expect(checked).toBeGreaterThan(10);
  });
});
