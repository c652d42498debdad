import type { Timings } from './stats.js';

/** Markdown pieces the benchmark's report is written with. */

export function time(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

export function spread(value: Timings): string {
  return `${time(value.p50)} (${time(value.min)}–${time(value.max)})`;
}

export function table(header: readonly string[], rows: ReadonlyArray<readonly (string | number)[]>): string {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
}

export function mb(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : `${value} MB`;
}
