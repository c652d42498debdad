/** Nearest-rank percentile, p in 0..100. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** A set of timings (milliseconds unless said otherwise), every run kept. */
export interface Timings {
  p50: number;
  min: number;
  max: number;
  runs: number[];
}

export function timings(runs: readonly number[]): Timings {
  const rounded = runs.map((value) => round(value, 1));
  return { p50: round(median(runs), 1), min: Math.min(...rounded), max: Math.max(...rounded), runs: rounded };
}

export function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

export interface LinearFit {
  /** Cost that does not grow with the work (ms). */
  intercept: number;
  /** Cost per unit of work (ms). */
  slope: number;
  r2: number;
  points: Array<{ x: number; y: number; fitted: number; residualPercent: number; marginal: number | null }>;
  /** Largest |residual| as a share of the measured value, in percent. */
  worstPercent: number;
}

/** Least squares through (x, y); residuals say where the growth is not linear, the marginal cost between neighbours how. */
export function linearFit(points: ReadonlyArray<{ x: number; y: number }>): LinearFit {
  const n = points.length;
  const meanX = points.reduce((sum, point) => sum + point.x, 0) / n;
  const meanY = points.reduce((sum, point) => sum + point.y, 0) / n;
  const sxx = points.reduce((sum, point) => sum + (point.x - meanX) ** 2, 0);
  const sxy = points.reduce((sum, point) => sum + (point.x - meanX) * (point.y - meanY), 0);
  const slope = sxx === 0 ? 0 : sxy / sxx;
  const intercept = meanY - slope * meanX;
  const ssTotal = points.reduce((sum, point) => sum + (point.y - meanY) ** 2, 0);
  const fitted = points.map((point) => intercept + slope * point.x);
  const ssResidual = points.reduce((sum, point, index) => sum + (point.y - (fitted[index] as number)) ** 2, 0);
  const rows = points.map((point, index) => {
    const previous = points[index - 1];
    return {
      x: point.x,
      y: point.y,
      fitted: round(fitted[index] as number, 1),
      residualPercent: round((100 * (point.y - (fitted[index] as number))) / point.y, 1),
      marginal: previous ? round((point.y - previous.y) / (point.x - previous.x), 4) : null,
    };
  });
  return {
    intercept: round(intercept, 1),
    slope: round(slope, 4),
    r2: round(ssTotal === 0 ? 1 : 1 - ssResidual / ssTotal, 4),
    points: rows,
    worstPercent: Math.max(...rows.map((row) => Math.abs(row.residualPercent))),
  };
}

/**
 * Calls `step(item, run)` round-robin: round r visits every item that wants more than r runs, so that a slow drift
 * of the machine's load touches every item alike instead of whichever was measured last.
 */
export async function inRounds<T>(items: readonly T[], runsOf: (item: T) => number, step: (item: T, run: number) => Promise<void>): Promise<void> {
  const rounds = Math.max(0, ...items.map(runsOf));
  for (let run = 0; run < rounds; run += 1) {
    for (const item of items) if (run < runsOf(item)) await step(item, run);
  }
}
