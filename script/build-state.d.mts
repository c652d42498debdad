/** Types of build-state.mjs for the TypeScript that imports it (tests). */
export const STAMP: string;
export function sourceHash(root: string): string;
export function buildState(root: string): 'fresh' | 'stale' | 'missing';
