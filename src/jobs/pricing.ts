import type { Config } from '../config.js';

export type Pricing = Config['pricing'];

/** Money rounded to 1/1,000,000 of the currency unit, so sums of costs add up. */
function round(amount: number): number {
  return Math.round(amount * 1e6) / 1e6;
}

/** Seconds as the API states them: to the millisecond. */
export function roundSeconds(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

export function ttsCost(pricing: Pricing, characters: number): number {
  return round((characters / 1000) * pricing.ttsPer1kChars);
}

export function videoCost(pricing: Pricing, characters: number, durationSeconds: number): number {
  return round((characters / 1000) * pricing.videoPer1kChars + (durationSeconds / 60) * pricing.videoPerMinute);
}

/** A cached answer's price: the full price times PRICE_CACHE_HIT_FACTOR (0 by default: free). */
export function cachedCost(fullCost: number, hitPriceFactor: number): number {
  return round(fullCost * hitPriceFactor);
}
