// The Kaiser window, for the windowed-sinc filters of the true-peak meter (loudness.ts) and the resampler (resample.ts).

/** The modified Bessel function of the first kind, order 0, by its power series (ample for the windows' range). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 50; k += 1) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
    if (term < 1e-12 * sum) break;
  }
  return sum;
}

/** The Kaiser window of `beta` at `ratio` of its half-width from its middle (0 at and beyond its edges). */
export function kaiserWindow(ratio: number, beta: number): number {
  return Math.abs(ratio) >= 1 ? 0 : besselI0(beta * Math.sqrt(1 - ratio * ratio)) / besselI0(beta);
}
