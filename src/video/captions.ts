import type { CaptionPiece } from '../speech/captions.js';
import type { SpokenWord } from '../speech/words.js';
import type { CaptionFamily } from './font.js';
import type { CaptionBox } from './frame.js';

/** Burned-in captions: the words, their cues, and the frames at which the picture changes. */
/** A spoken word as shown: the request text between two spaces, lit from `start`. */
export type CaptionWord = SpokenWord;

export type { CaptionPiece } from '../speech/captions.js';

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
  /** The font family the lines were measured in, and are drawn in; `sans` when absent. */
  family?: CaptionFamily;
  words: CaptionWord[];
  /** Frame at which each word lights up. */
  wordFrames: number[];
  cues: Cue[];
  states: CaptionState[];
}
