// Where creators post: each platform's frame, loudness and the part of the frame its own buttons and text leave free.
import type { AspectRatio, VideoResolution } from './frame-shapes.js';

/** Where captions may go, as fractions of the frame: left and right margins, the gap under the last line, the font size. */
export interface SafeArea {
  left: number;
  right: number;
  top: number;
  bottom: number;
  /** Font size as a fraction of the frame's shorter side. */
  fontSize: number;
}

export interface PlatformPreset {
  aspectRatio: AspectRatio;
  resolution: VideoResolution;
  /** Integrated loudness in LUFS the platform normalises to. */
  loudness: number;
  /** Its safe area, where it differs from the aspect ratio's own (frame.ts). */
  safeArea?: SafeArea;
}

/**
 * The platforms' sizes and safe areas, from their published guidance, rounded: TikTok's caption, buttons and tabs
 * leave about the middle 1080×1280 free; Reels covers more of the bottom (caption and audio line); Shorts less.
 */
export const PLATFORMS = {
  tiktok: { aspectRatio: '9:16', resolution: '1080p', loudness: -14, safeArea: { left: 0.06, right: 0.15, top: 0.12, bottom: 0.26, fontSize: 0.068 } },
  reels: { aspectRatio: '9:16', resolution: '1080p', loudness: -14, safeArea: { left: 0.06, right: 0.14, top: 0.13, bottom: 0.3, fontSize: 0.068 } },
  shorts: { aspectRatio: '9:16', resolution: '1080p', loudness: -14, safeArea: { left: 0.06, right: 0.13, top: 0.1, bottom: 0.22, fontSize: 0.068 } },
  youtube: { aspectRatio: '16:9', resolution: '1080p', loudness: -14 },
  'instagram-feed': { aspectRatio: '4:5', resolution: '1080p', loudness: -14 },
} as const satisfies Record<string, PlatformPreset>;

export type PlatformName = keyof typeof PLATFORMS;
export const PLATFORM_NAMES = Object.keys(PLATFORMS) as PlatformName[];

/** The platform's safe area when the video has its aspect ratio; undefined otherwise (the aspect ratio's own applies). */
export function platformSafeArea(platform: PlatformName | undefined, aspectRatio: AspectRatio): SafeArea | undefined {
  const preset: PlatformPreset | undefined = platform && PLATFORMS[platform];
  return preset?.aspectRatio === aspectRatio ? preset.safeArea : undefined;
}
