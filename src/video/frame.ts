import type { AspectRatio, FrameSize, VideoResolution } from './frame-shapes.js';
import { DEFAULT_LOOK, STYLE_PRESETS, type CaptionLook } from './caption-style.js';
import { PLATFORMS, platformSafeArea, type PlatformName, type SafeArea } from './platforms.js';

export type { FrameSize } from './frame-shapes.js';

const SHORT_SIDE: Record<VideoResolution, number> = { '1080p': 1080, '720p': 720 };
/** 4:5 at 1080p is Instagram's feed size, 1080×1350; at 720p it is 720 high, 576×720 (both sides even, as x264 needs). */
const FOUR_FIVE: Record<VideoResolution, FrameSize> = { '1080p': { width: 1080, height: 1350 }, '720p': { width: 576, height: 720 } };

export function frameSize(resolution: VideoResolution, aspectRatio: AspectRatio): FrameSize {
  const short = SHORT_SIDE[resolution];
  const long = (short * 16) / 9;
  if (aspectRatio === '16:9') return { width: long, height: short };
  if (aspectRatio === '9:16') return { width: short, height: long };
  if (aspectRatio === '4:5') return { ...FOUR_FIVE[resolution] };
  return { width: short, height: short };
}

const SAFE_AREAS: Record<AspectRatio, SafeArea> = {
  // Title-safe 90 % box, captions in the lower part.
  '16:9': { left: 0.1, right: 0.1, top: 0.08, bottom: 0.08, fontSize: 0.065 },
  // TikTok, Reels and Shorts put their controls over the bottom quarter and a column of buttons over the right 15 %,
  // their tabs over the top tenth.
  '9:16': { left: 0.06, right: 0.15, top: 0.12, bottom: 0.26, fontSize: 0.068 },
  '1:1': { left: 0.08, right: 0.08, top: 0.09, bottom: 0.09, fontSize: 0.062 },
  // Instagram's feed: the profile grid crops 4:5 to 3:4 (about 3 % off each side), and the feed draws its mute and
  // tags buttons over the bottom corners.
  '4:5': { left: 0.08, right: 0.08, top: 0.08, bottom: 0.12, fontSize: 0.064 },
};

/** Caption geometry in pixels of the frame (the ASS script uses the frame size as its coordinate system). */
export interface CaptionBox extends FrameSize {
  fontSize: number;
  /** Height of a cue's lines at their largest (a lit word may be drawn larger): what the captions may cover above the bottom margin. */
  textHeight: number;
  /** Lines are centred between the two side margins. */
  marginLeft: number;
  marginRight: number;
  marginBottom: number;
  /** The safe area's top edge, in pixels from the top (where a title goes). */
  marginTop: number;
  /** Widest line, with room for the outline and for small differences between our measure and libass. */
  maxLineWidth: number;
  outline: number;
  /** Shadow depth in pixels (0: none). */
  shadow: number;
}

/**
 * Where the captions of a look go: the style's size, the lines of its cues placed at the top, middle or bottom of
 * the safe area (libass anchors them by their bottom), lines narrow enough for a lit word drawn larger.
 */
export function captionBox(size: FrameSize, aspectRatio: AspectRatio, look: CaptionLook = DEFAULT_LOOK): CaptionBox {
  const platformArea = platformSafeArea(look.platform, aspectRatio);
  const area = platformArea ?? SAFE_AREAS[aspectRatio];
  const preset = STYLE_PRESETS[look.style];
  const fontSize = Math.round(Math.min(size.width, size.height) * area.fontSize * preset.size * look.scale);
  const marginLeft = Math.round(size.width * area.left);
  const marginRight = Math.round(size.width * area.right);
  // A boxed line's padding is its "outline" (ASS border style 3).
  const outline = Math.max(2, Math.round(fontSize * (preset.box ? preset.outline : (look.outline ?? preset.outline))));
  const block = preset.maxLines * fontSize;
  // Under a platform's safe area, a lane for the progress bar (progressBarArea) between the captions and the band the app covers.
  const bottom = Math.round(size.height * area.bottom) + (platformArea ? 2 * barHeight(size.height) : 0);
  const marginBottom = {
    bottom,
    middle: Math.round((size.height - block) / 2),
    top: Math.round(size.height * (1 - area.top)) - block,
  }[look.position];
  return {
    ...size,
    fontSize,
    marginLeft,
    marginRight,
    marginBottom,
    marginTop: Math.round(size.height * area.top),
    textHeight: Math.ceil(block * (preset.litScale / 100)),
    maxLineWidth: Math.floor(((size.width - marginLeft - marginRight) * 0.96) / (preset.litScale / 100)) - 2 * outline,
    outline,
    shadow: Math.round(fontSize * preset.shadow),
  };
}

/** The progress bar's height: 0.8 % of the frame's, in whole pairs of rows (yuv420p). */
export function barHeight(frameHeight: number): number {
  return Math.max(2, 2 * Math.round((frameHeight * 0.008) / 2));
}

/** Where the progress bar is drawn, in pixels; every value even (yuv420p). */
export interface BarArea {
  left: number;
  top: number;
  width: number;
  height: number;
}

const even = (pixels: number) => 2 * Math.round(pixels / 2);

/**
 * The progress bar: along the frame's bottom edge; for a platform whose app draws over the bottom of the frame (its
 * safe area, at the platform's own aspect ratio), across the safe width just above that band, in the lane captionBox
 * keeps free of captions there: inside the bottom 0.8 % the app's own controls covered it.
 */
export function progressBarArea(size: FrameSize, platform?: PlatformName): BarArea {
  const height = barHeight(size.height);
  const preset = platform && PLATFORMS[platform];
  const area = preset && size.width * 16 === size.height * 9 ? platformSafeArea(platform, preset.aspectRatio) : undefined;
  if (!area) return { left: 0, top: size.height - height, width: size.width, height };
  const left = even(size.width * area.left);
  return { left, top: even(size.height * (1 - area.bottom)) - height, width: even(size.width * (1 - area.right)) - left, height };
}
