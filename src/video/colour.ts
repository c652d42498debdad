/**
 * BT.709 pictures drawn by filters that convert with BT.601: ffmpeg 5.1's colour source and its libass blending
 * (drawutils) turn RGB into Y'CbCr with the BT.601 matrix. Handing them the colour whose BT.601 Y'CbCr is the wanted
 * colour's BT.709 Y'CbCr makes their output BT.709 with no per-frame conversion; blending is linear in Y'CbCr, so
 * anti-aliased edges come out right too. A very saturated colour may fall outside RGB that way and is clipped.
 */

const BT709 = { kr: 0.2126, kb: 0.0722 };
const BT601 = { kr: 0.299, kb: 0.114 };

type Matrix = typeof BT709;

/** Y', Cb, Cr (Y' 0–1, chroma −0.5–0.5) of RGB 0–1. */
function toYcbcr([r, g, b]: readonly number[], { kr, kb }: Matrix): [number, number, number] {
  const y = kr * (r as number) + (1 - kr - kb) * (g as number) + kb * (b as number);
  return [y, ((b as number) - y) / (2 * (1 - kb)), ((r as number) - y) / (2 * (1 - kr))];
}

function toRgb([y, cb, cr]: readonly number[], { kr, kb }: Matrix): [number, number, number] {
  const r = (y as number) + 2 * (1 - kr) * (cr as number);
  const b = (y as number) + 2 * (1 - kb) * (cb as number);
  return [r, ((y as number) - kr * r - kb * b) / (1 - kr - kb), b];
}

const channels = (hex: string) => [0, 2, 4].map((at) => parseInt(hex.slice(at, at + 2), 16) / 255);
const toHex = (rgb: readonly number[]) =>
  rgb
    .map((value) => Math.round(Math.min(1, Math.max(0, value)) * 255).toString(16).padStart(2, '0'))
    .join('')
    .toUpperCase();

/** The RGB hex to give a BT.601 converter so that it writes the BT.709 Y'CbCr of `hex`. */
export function forBt601Drawing(hex: string): string {
  return toHex(toRgb(toYcbcr(channels(hex), BT709), BT601));
}

/**
 * Raw RGB24 → one yuv420p frame with BT.709 coefficients, limited range (what the video's VUI declares): Y' per
 * pixel, Cb and Cr averaged over each 2×2 block. Width and height must be even.
 */
export function rgbToYuv420(rgb: Uint8Array, width: number, height: number): Buffer {
  const frame = Buffer.alloc((width * height * 3) / 2);
  const chromaWidth = width / 2;
  const cbOffset = width * height;
  const crOffset = cbOffset + (width * height) / 4;
  const { kr, kb } = BT709;
  const kg = 1 - kr - kb;
  for (let y = 0; y < height; y += 2) {
    for (let x = 0; x < width; x += 2) {
      let cb = 0;
      let cr = 0;
      for (const [dx, dy] of [[0, 0], [1, 0], [0, 1], [1, 1]] as const) {
        const at = ((y + dy) * width + x + dx) * 3;
        const r = (rgb[at] as number) / 255;
        const g = (rgb[at + 1] as number) / 255;
        const b = (rgb[at + 2] as number) / 255;
        const luma = kr * r + kg * g + kb * b;
        frame[(y + dy) * width + x + dx] = Math.round(16 + 219 * luma);
        cb += (b - luma) / (2 * (1 - kb));
        cr += (r - luma) / (2 * (1 - kr));
      }
      const chroma = (y / 2) * chromaWidth + x / 2;
      frame[cbOffset + chroma] = Math.round(128 + 224 * (cb / 4));
      frame[crOffset + chroma] = Math.round(128 + 224 * (cr / 4));
    }
  }
  return frame;
}
