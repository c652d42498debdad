// Voice blends as Kokoro-FastAPI names them: `af_bella(2)+af_sky(1)` is two thirds Bella and one third Sky, each
// pack's style vectors weighted by its share (weights normalized; a pack without one weighs 1).
import { PACK_NAME } from './packs.js';

export interface BlendPart {
  pack: string;
  /** Its share: the weights of a blend add up to 1. */
  weight: number;
}

/** Packs in one blend at most: each costs a read of its row per inference. */
export const MAX_BLEND_PARTS = 8;
const PART = /^([a-z0-9_]+)(?:\(([0-9]{1,4}(?:\.[0-9]{1,3})?)\))?$/u;

/**
 * The packs of a voice name (the id without `kokoro:`), case-insensitive: one pack, or several joined by `+` with
 * optional weights in parentheses; undefined when it is neither (a bad name, a weight of 0, more than MAX_BLEND_PARTS).
 */
export function parseBlend(name: string): BlendPart[] | undefined {
  const pieces = name.toLowerCase().split('+');
  if (pieces.length > MAX_BLEND_PARTS) return undefined;
  const parts: BlendPart[] = [];
  for (const piece of pieces) {
    const [, pack = '', weight] = PART.exec(piece.trim()) ?? [];
    const value = weight === undefined ? 1 : Number(weight);
    if (!PACK_NAME.test(pack) || !(value > 0)) return undefined;
    parts.push({ pack, weight: value });
  }
  const total = parts.reduce((sum, part) => sum + part.weight, 0);
  return parts.map((part) => ({ pack: part.pack, weight: part.weight / total }));
}

/**
 * The voice name a blend is listed and cached under: the pack alone, or each pack with its weight in lowest terms
 * of the given ones (`af_bella(2)+af_sky(1)` stays, `af_bella(4)+af_sky(2)` becomes it, `af_bella+af_sky` is
 * `af_bella(1)+af_sky(1)`).
 */
export function blendName(parts: readonly BlendPart[]): string {
  const [only] = parts;
  if (parts.length === 1 && only) return only.pack;
  const smallest = Math.min(...parts.map((part) => part.weight));
  return parts.map((part) => `${part.pack}(${Number((part.weight / smallest).toFixed(3))})`).join('+');
}
