import { drawnRows, type DrawnCaptions } from '../caption-geometry.js';
import { captionFont } from '../font.js';

/** Rows of the frame the captions may touch, in pixels: whole macroblock rows (16 px) from the top. */
export interface CaptionBand {
  top: number;
  /** A multiple of 16, unless the band reaches the bottom of the frame. */
  height: number;
}

/** A macroblock is 16 × 16 luma samples (6.3): the band's slices must cover whole macroblock rows of the picture. */
const MB = 16;

/** x264's motion search reaches about 20 px past the band. Outside its own picture a motion vector reads the edge rows repeated (8.4.2.2), inside the full picture the real rows: that far, the band must be plain background. */
const SEARCH_MARGIN = 24;

/**
 * The only rows encoded more than once (see compose.ts): the rows the captions' script draws on over the whole video
 * (caption-geometry.ts drawnRows: each glyph's ink as shaped, marks above the line included, its outline, blur and
 * shadow, the boxes, the title while it shows) and SEARCH_MARGIN on either side, in whole macroblock rows.
 */
export function captionBand(captions: DrawnCaptions): CaptionBand {
  const { box } = captions;
  const font = captionFont(captions.look.family, captions.language);
  const textBottom = box.height - box.marginBottom;
  // Nothing drawn: a line's height over the bottom margin, as before there was text to measure.
  const drawn = drawnRows(captions, font) ?? { top: textBottom - box.fontSize, bottom: textBottom };
  const top = Math.max(0, Math.floor((drawn.top - SEARCH_MARGIN) / MB) * MB);
  let bottom = Math.ceil((drawn.bottom + SEARCH_MARGIN) / MB) * MB;
  // Past the bottom, or less than a macroblock row above it: the band takes the rest of the frame, down to the
  // picture's last macroblock row (cropped, 7.4.2.1.1, when the height is no multiple of 16).
  if (bottom + MB > box.height) bottom = box.height;
  return { top, height: bottom - top };
}
