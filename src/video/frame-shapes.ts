// The video's shape as words the domain uses: plain constants and types, with no schema (the API's in api/video-options.ts).

/** Shorter side of the frame in pixels: 1080 or 720. */
export const RESOLUTIONS = ['1080p', '720p'] as const;
export type VideoResolution = (typeof RESOLUTIONS)[number];

export const ASPECT_RATIOS = ['16:9', '9:16', '1:1', '4:5'] as const;
export type AspectRatio = (typeof ASPECT_RATIOS)[number];

/** `constant`: every frame lasts 1/fps; `variable`: one frame per caption change. */
export const FRAME_RATES = ['constant', 'variable'] as const;
export type FrameRate = (typeof FRAME_RATES)[number];

/** A frame's size in pixels. */
export interface FrameSize {
  width: number;
  height: number;
}
