import type { CaptionPiece } from '../speech/captions/cues.js';
import type { SpokenWord } from '../speech/words.js';
import type { TimedChapter } from '../speech/chapters.js';
import type { CaptionLook } from './caption-style.js';
import type { CaptionBox } from './frame.js';
import type { CaptionSpeaker } from './speakers.js';

/** Burned-in captions: the words, their cues, and the frames at which the picture changes. */
/** A spoken word as shown: the request text between two spaces, lit from `start`. */
export type CaptionWord = SpokenWord;

export type { CaptionPiece } from '../speech/captions/cues.js';

export interface Cue {
  /** First frame shown and the frame after the last, at Captions.fps. */
  startFrame: number;
  endFrame: number;
  /** One or two lines. */
  lines: CaptionPiece[][];
  /** A dialogue's: who says it, an index into Captions.speakers. */
  speaker?: number;
}

/** `CaptionState.word` of styles that light no word. */
export const NO_WORD = -1;

/** A stretch of frames that look the same: one cue with one word lit (NO_WORD for styles that light none). */
export interface CaptionState {
  startFrame: number;
  endFrame: number;
  cue: number;
  word: number;
  /** A popping word on its way to its size: % of its lit size (caption-style.ts POP_SIZES); undefined: at its size. */
  grow?: number;
}

/** A hook shown over the first seconds, or a chapter's card: its lines, when it shows, where its block starts and how big it is drawn. */
export interface CaptionTitle {
  lines: string[];
  /** The first frame it shows (a hook: 0). */
  startFrame: number;
  /** The frame it is gone from. */
  endFrame: number;
  /** Pixels from the top of the frame to the top of its first line. */
  top: number;
  fontSize: number;
  /** Its size, % of fontSize, where its widest line is too wide for the safe area. */
  fit: number;
}

export interface Captions {
  fps: number;
  /** A title over the first seconds (`title`), drawn with the captions. */
  title?: CaptionTitle;
  /** Chapter cards: each chapter's title over its first seconds, drawn as the title is. */
  cards?: CaptionTitle[];
  /** A text with chapters: each with its span in the video. */
  chapters?: TimedChapter[];
  /** Frames in the whole video: the narration's length rounded to whole frames. */
  frames: number;
  box: CaptionBox;
  /** How the captions look: style, font family (measured and drawn with it), colours, position, size. */
  look: CaptionLook;
  /** The voice's language (BCP 47), which picks the CJK glyph forms (font.ts captionFont). */
  language?: string;
  words: CaptionWord[];
  /** Frame at which each word lights up. */
  wordFrames: number[];
  cues: Cue[];
  states: CaptionState[];
  /** A dialogue's speakers (speakers.ts), each cue's drawn in its look. */
  speakers?: CaptionSpeaker[];
}

/** The titles a video shows, in order: the hook, then the chapter cards. */
export function titlesOf(captions: Pick<Captions, 'title' | 'cards'>): CaptionTitle[] {
  return [...(captions.title ? [captions.title] : []), ...(captions.cards ?? [])];
}
