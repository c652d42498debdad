/**
 * The H.264 splicer: a narrated video's stream put together from tiny x264 encodes (see compose.ts), and all of
 * the rules it relies on. bitstream.ts: Exp-Golomb, NAL units, emulation prevention; syntax.ts: parameter sets,
 * slice headers, skip slices; compose.ts: the pictures; drawing.ts: the captions as it takes them, drawn by the caller, and the rows encoded
 * more than once; parts.ts: the x264 encodes; mp4-samples.ts: the stream as an MP4 track's samples; self-check.ts: the start-up check that this machine's x264 output still splices.
 * Section numbers in comments are those of ITU-T H.264.
 */
export { H264Error, splitNalUnits } from './bitstream.js';
export { composeStream, type ComposedStream, type StreamParts } from './compose.js';
export { bandAround, type CaptionBand, type CaptionDrawing } from './drawing.js';
export { mp4Samples } from './mp4-samples.js';
export { BT709_COLOUR, BT709_VUI, X264_OPTIONS, encodePictureParts, forceIdrOptions, idrFrames, pictureFrames, splicePicture, type PictureFilters, type PictureLayer, type PictureParts, type PictureScene, type Splice, type SpliceJob } from './parts.js';
export { checkSplicing, SplicerCheck, type SpliceCheck, type SpliceCheckOptions, type SpliceSample } from './self-check.js';
