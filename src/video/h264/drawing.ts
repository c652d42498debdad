/** Rows of the frame the captions may touch, in pixels: whole macroblock rows (16 px) from the top. */
export interface CaptionBand {
  top: number;
  /** A multiple of 16, unless the band reaches the bottom of the frame. */
  height: number;
}

/**
 * The captions as the splicer takes them, drawn by the renderer (video/caption-drawing.ts): the splicer knows the
 * frames where they change and the rows they draw on, never what they say or how they look.
 */
export interface CaptionDrawing {
  /** Frames of the captions' timeline. */
  readonly frames: number;
  /** The frames of each title (the hook, chapter cards), in order: while one shows, the band reaches up to the titles. */
  readonly titleSpans?: ReadonlyArray<{ startFrame: number; endFrame: number }>;
  /** Frames where the picture changes: the first, the last, and where a caption or a title begins or ends. */
  readonly changes: readonly number[];
  /** The band the captions draw on and the ASS script that draws them in it: with the titles (while one shows), or without. */
  draw(titled: boolean): { area: CaptionBand; script: string };
}

/** A macroblock is 16 × 16 luma samples (6.3): the band's slices must cover whole macroblock rows of the picture. */
const MB = 16;

/** x264's motion search reaches about 20 px past the band. Outside its own picture a motion vector reads the edge rows repeated (8.4.2.2), inside the full picture the real rows: that far, the band must be plain background. */
const SEARCH_MARGIN = 24;

/**
 * The only rows encoded more than once (see compose.ts): the rows the captions draw on over the whole video (`drawn`,
 * as the caller measured them) and SEARCH_MARGIN on either side, in whole macroblock rows of a frame `height` high.
 */
export function bandAround(drawn: { top: number; bottom: number }, height: number): CaptionBand {
  const top = Math.max(0, Math.floor((drawn.top - SEARCH_MARGIN) / MB) * MB);
  let bottom = Math.ceil((drawn.bottom + SEARCH_MARGIN) / MB) * MB;
  // Past the bottom, or less than a macroblock row above it: the band takes the rest of the frame, down to the
  // picture's last macroblock row (cropped, 7.4.2.1.1, when the height is no multiple of 16).
  if (bottom + MB > height) bottom = height;
  return { top, height: bottom - top };
}
