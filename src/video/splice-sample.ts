// The tiny video the splicer's start-up check splices (h264/self-check.ts), laid out and drawn here as every
// video's captions are, so that the check runs the renderer's own drawing.
import type { Speech } from '../speech/speech.js';
import { captionDrawing } from './caption-drawing.js';
import type { FrameSize } from './frame.js';
import type { SpliceSample } from './h264/index.js';
import { keyFrames, layoutCaptions } from './layout.js';

// 180×200 in 9:16 puts the band in the middle (rows above and below it) and crops the last macroblock column
// and row, as 1080-pixel sides do; two words lit in turn, then the cue gone: the picture changes at 2, 5 and 13.
const SIZE: FrameSize = { width: 180, height: 200 };
const FPS = 10;
const TEXT = 'Splice check';
const SAMPLE_RATE = 8000;
const WORDS = [
  { word: 'Splice', start: 0.2, end: 0.45, textOffset: 0, textLength: 6 },
  { word: 'check', start: 0.5, end: 0.75, textOffset: 7, textLength: 5 },
];
const SECONDS = 1.4;
/** An IDR picture every 4 frames: at 0, 4, 8 and 12, one of them (12) in the middle of a caption. */
const KEYFRAME_INTERVAL = 4;

export function spliceSample(): SpliceSample {
  const samples = new Int16Array(Math.round(SECONDS * SAMPLE_RATE));
  const speech: Speech = { samples, sampleRate: SAMPLE_RATE, duration: SECONDS, sentences: [{ start: 0.2, end: 0.75, textOffset: 0, textLength: TEXT.length }], words: WORDS };
  const captions = layoutCaptions({ text: TEXT, speech, size: SIZE, aspectRatio: '9:16', fps: FPS });
  const captionEdges = keyFrames(captions).filter((frame) => captions.states.some((state) => state.startFrame === frame || state.endFrame === frame));
  return { size: SIZE, fps: FPS, keyframeInterval: KEYFRAME_INTERVAL, captions: captionDrawing(captions), captionEdges };
}
