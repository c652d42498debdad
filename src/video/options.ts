import { Type, type Static } from '@sinclair/typebox';

export const VideoResolution = Type.Union([Type.Literal('1080p'), Type.Literal('720p')], {
  default: '1080p',
  description: 'Shorter side of the frame in pixels: 1080p gives 1920×1080, 1080×1920 or 1080×1080; 720p gives 1280×720, 720×1280 or 720×720.',
});
export type VideoResolution = Static<typeof VideoResolution>;

export const AspectRatio = Type.Union([Type.Literal('16:9'), Type.Literal('9:16'), Type.Literal('1:1')], {
  default: '16:9',
  description: '16:9 landscape, 9:16 portrait (captions stay clear of the bottom fifth, where phone apps put their controls), 1:1 square.',
});
export type AspectRatio = Static<typeof AspectRatio>;

export const FrameRate = Type.Union([Type.Literal('constant'), Type.Literal('variable')], {
  default: 'constant',
  description:
    '`constant`: every frame lasts 1/fps, as upload platforms (YouTube, TikTok, Instagram…) expect. ' +
    '`variable`: one frame per caption change, for web and in-app playback; smaller and about twice as fast to make, ' +
    'and decoded at `fps` it gives exactly the frames of the constant-rate video.',
});
export type FrameRate = Static<typeof FrameRate>;
