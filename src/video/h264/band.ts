import type { CaptionBox } from '../frame.js';
import type { CaptionTitle } from '../captions.js';

/** Rows of the frame the captions may touch, in pixels: whole macroblock rows (16 px) from the top. */
export interface CaptionBand {
  top: number;
  /** A multiple of 16, unless the band reaches the bottom of the frame. */
  height: number;
}

/** A macroblock is 16 × 16 luma samples (6.3): the band's slices must cover whole macroblock rows of the picture. */
const MB = 16;

/**
 * The only rows encoded more than once (see compose.ts). libass makes a line as tall as the font size; above the
 * lines we leave a further line for outlines and stacked accents, below room for the outline.
 */
export function captionBand(box: CaptionBox, title?: CaptionTitle): CaptionBand {
  const textBottom = box.height - box.marginBottom;
  // A title above the captions widens the band up to it (its outline and accents a line's height above its top).
  const highest = Math.min(textBottom - box.textHeight, title ? title.top : Infinity);
  const top = Math.max(0, Math.floor((highest - Math.max(24, box.fontSize + 2 * box.outline)) / MB) * MB);
  // x264's motion search reaches about 20 px past the band. Outside its own picture a motion vector reads the edge
  // rows repeated (8.4.2.2), inside the full picture the real rows: that far, the band must be plain background.
  let bottom = Math.ceil((textBottom + Math.max(24, box.fontSize / 4 + 2 * box.outline)) / MB) * MB;
  // Past the bottom, or less than a macroblock row above it: the band takes the rest of the frame, down to the
  // picture's last macroblock row (cropped, 7.4.2.1.1, when the height is no multiple of 16).
  if (bottom + MB > box.height) bottom = box.height;
  return { top, height: bottom - top };
}
