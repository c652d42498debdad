import type { Speech } from '../speech/pcm.js';
import type { AspectRatio, VideoResolution } from './options.js';
import { captionFont, type MeasuredFont } from './font.js';
import { timedWords, type SpokenWord } from '../speech/words.js';
import { breakIntoCues, HOLD_SECONDS, type CaptionPiece } from '../speech/captions.js';

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

/** Where captions may go, as fractions of the frame: side margins, the gap under the last line, the font size. */
interface SafeArea {
  side: number;
  bottom: number;
  /** Font size as a fraction of the frame's shorter side. */
  fontSize: number;
}

const SAFE_AREAS: Record<AspectRatio, SafeArea> = {
  // Title-safe 90 % box, captions in the lower part.
  '16:9': { side: 0.1, bottom: 0.08, fontSize: 0.065 },
  // Phone apps put their controls over the bottom fifth and their buttons along the right edge.
  '9:16': { side: 0.09, bottom: 0.26, fontSize: 0.068 },
  '1:1': { side: 0.08, bottom: 0.09, fontSize: 0.062 },
};

/** Caption geometry in pixels of the frame (the ASS script uses the frame size as its coordinate system). */
export interface CaptionBox extends FrameSize {
  fontSize: number;
  marginSide: number;
  marginBottom: number;
  /** Widest line, with room for the outline and for small differences between our measure and libass. */
  maxLineWidth: number;
  outline: number;
}

export function captionBox(size: FrameSize, aspectRatio: AspectRatio): CaptionBox {
  const area = SAFE_AREAS[aspectRatio];
  const fontSize = Math.round(Math.min(size.width, size.height) * area.fontSize);
  const marginSide = Math.round(size.width * area.side);
  const outline = Math.max(2, Math.round(fontSize / 16));
  return {
    ...size,
    fontSize,
    marginSide,
    marginBottom: Math.round(size.height * area.bottom),
    maxLineWidth: Math.floor((size.width - 2 * marginSide) * 0.96) - 2 * outline,
    outline,
  };
}

/** A spoken word as shown: the request text between two spaces, lit from `start`. */
export type CaptionWord = SpokenWord;

export type { CaptionPiece };

export interface Cue {
  /** First frame shown and the frame after the last, at Captions.fps. */
  startFrame: number;
  endFrame: number;
  /** One or two lines. */
  lines: CaptionPiece[][];
}

/** A stretch of frames that look the same: one cue with one word lit. */
export interface CaptionState {
  startFrame: number;
  endFrame: number;
  cue: number;
  word: number;
}

export interface Captions {
  fps: number;
  /** Frames in the whole video: the narration's length rounded to whole frames. */
  frames: number;
  box: CaptionBox;
  words: CaptionWord[];
  /** Frame at which each word lights up. */
  wordFrames: number[];
  cues: Cue[];
  states: CaptionState[];
}

export interface LayoutOptions {
  text: string;
  speech: Speech;
  size: FrameSize;
  aspectRatio: AspectRatio;
  fps: number;
  font?: MeasuredFont;
}

export function frameCount(speech: Speech, fps: number): number {
  return Math.max(1, Math.round((speech.samples.length / speech.sampleRate) * fps));
}

/** Words, cues of at most two measured lines, and the frames where the picture changes. */
export function layoutCaptions(options: LayoutOptions): Captions {
  const font = options.font ?? captionFont();
  const box = captionBox(options.size, options.aspectRatio);
  const frames = frameCount(options.speech, options.fps);
  const words = timedWords(options.text, options.speech);
  const toFrame = (seconds: number) => Math.min(frames, Math.max(0, Math.ceil(seconds * options.fps - 1e-6)));
  const wordFrames = words.map((word) => Math.min(frames - 1, toFrame(word.start)));
  const cues = breakIntoCues(words, (line) => font.width(line, box.fontSize) <= box.maxLineWidth)
    .map(({ start, end, lines }): Cue => {
      const first = lines[0]?.[0]?.word ?? 0;
      const startFrame = Math.max(wordFrames[first] as number, Math.min(frames - 1, toFrame(start)));
      return { startFrame, endFrame: Math.max(startFrame + 1, toFrame(end + HOLD_SECONDS)), lines };
    })
    .map((cue, index, all) => ({ ...cue, endFrame: Math.min(cue.endFrame, all[index + 1]?.startFrame ?? frames) }))
    .filter((cue) => cue.endFrame > cue.startFrame);
  return { fps: options.fps, frames, box, words, wordFrames, cues, states: captionStates(cues, wordFrames) };
}

function captionStates(cues: readonly Cue[], wordFrames: readonly number[]): CaptionState[] {
  const states: CaptionState[] = [];
  cues.forEach((cue, index) => {
    const cueWords = [...new Set(cue.lines.flat().map((piece) => piece.word))];
    cueWords.forEach((word, position) => {
      const next = cueWords[position + 1];
      const startFrame = Math.max(cue.startFrame, wordFrames[word] as number);
      const endFrame = Math.min(cue.endFrame, next === undefined ? cue.endFrame : (wordFrames[next] as number));
      if (endFrame > startFrame) states.push({ startFrame, endFrame, cue: index, word });
    });
  });
  return states;
}

/** Frames where the picture changes, plus the first and the last: the only frames worth encoding. */
export function keyFrames(captions: Pick<Captions, 'frames' | 'states'>): number[] {
  const frames = new Set([0, captions.frames - 1]);
  for (const state of captions.states) {
    frames.add(state.startFrame);
    if (state.endFrame < captions.frames) frames.add(state.endFrame);
  }
  return [...frames].sort((a, b) => a - b);
}
