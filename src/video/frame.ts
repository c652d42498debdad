import type { AspectRatio, VideoResolution } from './options.js';

export interface FrameSize {
  width: number;
  height: number;
}

const SHORT_SIDE: Record<VideoResolution, number> = { '1080p': 1080, '720p': 720 };

export function frameSize(resolution: VideoResolution, aspectRatio: AspectRatio): FrameSize {
  const short = SHORT_SIDE[resolution];
  const long = (short * 16) / 9;
  if (aspectRatio === '16:9') return { width: long, height: short };
  if (aspectRatio === '9:16') return { width: short, height: long };
  return { width: short, height: short };
}

/** Where captions may go, as fractions of the frame: left and right margins, the gap under the last line, the font size. */
interface SafeArea {
  left: number;
  right: number;
  bottom: number;
  /** Font size as a fraction of the frame's shorter side. */
  fontSize: number;
}

const SAFE_AREAS: Record<AspectRatio, SafeArea> = {
  // Title-safe 90 % box, captions in the lower part.
  '16:9': { left: 0.1, right: 0.1, bottom: 0.08, fontSize: 0.065 },
  // TikTok, Reels and Shorts put their controls over the bottom quarter and a column of buttons over the right 15 %.
  '9:16': { left: 0.06, right: 0.15, bottom: 0.26, fontSize: 0.068 },
  '1:1': { left: 0.08, right: 0.08, bottom: 0.09, fontSize: 0.062 },
};

/** Caption geometry in pixels of the frame (the ASS script uses the frame size as its coordinate system). */
export interface CaptionBox extends FrameSize {
  fontSize: number;
  /** Lines are centred between the two side margins. */
  marginLeft: number;
  marginRight: number;
  marginBottom: number;
  /** Widest line, with room for the outline and for small differences between our measure and libass. */
  maxLineWidth: number;
  outline: number;
}

export function captionBox(size: FrameSize, aspectRatio: AspectRatio): CaptionBox {
  const area = SAFE_AREAS[aspectRatio];
  const fontSize = Math.round(Math.min(size.width, size.height) * area.fontSize);
  const marginLeft = Math.round(size.width * area.left);
  const marginRight = Math.round(size.width * area.right);
  const outline = Math.max(2, Math.round(fontSize / 16));
  return {
    ...size,
    fontSize,
    marginLeft,
    marginRight,
    marginBottom: Math.round(size.height * area.bottom),
    maxLineWidth: Math.floor((size.width - marginLeft - marginRight) * 0.96) - 2 * outline,
    outline,
  };
}
