import type { Speech } from '../speech/speech.js';
import type { AspectRatio } from './options.js';
import { captionFont, type MeasuredFont } from './font.js';
import { POP_SECONDS, POP_SIZES, resolveLook, shownText, STYLE_PRESETS, type CaptionLook } from './caption-style.js';
import { timedWords } from '../speech/words.js';
import { silenceEmoji } from '../engines/emoji-text.js';
import { breakIntoCues, HOLD_SECONDS } from '../speech/captions.js';
import { NO_WORD, type CaptionState, type CaptionTitle, type Captions, type Cue } from './captions.js';
import { captionBox, type CaptionBox, type FrameSize } from './frame.js';

export interface LayoutOptions {
  text: string;
  speech: Speech;
  size: FrameSize;
  aspectRatio: AspectRatio;
  fps: number;
  /** Style, family (measured with its fallback chain as libass draws it, see ass.ts), colours, position, size. */
  look?: Partial<CaptionLook>;
  /** The voice's language (BCP 47): Japanese and Chinese text is drawn in the glyph forms its readers expect. */
  language?: string;
  /** Measures in place of the family's font (tests). */
  font?: MeasuredFont;
  /** A title shown over the first `seconds` (a hook). */
  title?: { text: string; seconds: number };
}

export function frameCount(speech: Speech, fps: number): number {
  return Math.max(1, Math.round((speech.samples.length / speech.sampleRate) * fps));
}

/** Words, cues of at most two measured lines, and the frames where the picture changes. */
export function layoutCaptions(options: LayoutOptions): Captions {
  const look = resolveLook(options.look);
  const preset = STYLE_PRESETS[look.style];
  const font = options.font ?? captionFont(look.family, options.language);
  const box = captionBox(options.size, options.aspectRatio, look);
  const frames = frameCount(options.speech, options.fps);
  const words = timedWords(options.text, options.speech);
  const toFrame = (seconds: number) => Math.min(frames, Math.max(0, Math.ceil(seconds * options.fps - 1e-6)));
  const wordFrames = words.map((word) => Math.min(frames - 1, toFrame(word.start)));
  const fits = (line: string) => font.width(shownText(line, look, options.language), box.fontSize) <= box.maxLineWidth;
  // A style of a few big words draws a word too wide for its line smaller (ass.ts stateSizes) rather than cut it,
  // the emoji that stand with it included.
  const shrinks = 'pop' in preset && preset.pop;
  const cues = breakIntoCues(words, (line) => fits(line) || (shrinks && !/\s/u.test(silenceEmoji(line).trim())), preset)
    .map(({ start, end, lines }): Cue => {
      const first = lines[0]?.[0]?.word ?? 0;
      const startFrame = Math.max(wordFrames[first] as number, Math.min(frames - 1, toFrame(start)));
      return { startFrame, endFrame: Math.max(startFrame + 1, toFrame(end + HOLD_SECONDS)), lines };
    })
    .map((cue, index, all) => ({ ...cue, endFrame: Math.min(cue.endFrame, all[index + 1]?.startFrame ?? frames) }))
    .filter((cue) => cue.endFrame > cue.startFrame);
  const lit = preset.highlight ? captionStates(cues, wordFrames) : cues.map((cue, index) => ({ startFrame: cue.startFrame, endFrame: cue.endFrame, cue: index, word: NO_WORD }));
  const states = shrinks ? lit.flatMap((state) => popping(state, options.fps)) : lit;
  const title = options.title && titleOf(options.title, box, font, look, options);
  return { fps: options.fps, frames, box, look, language: options.language, words, wordFrames, cues, states, ...(title ? { title } : {}) };
}

/** Title lines at most. */
const TITLE_LINES = 2;
/** The title's size, times the style's caption size at 1 (karaoke's). */
const TITLE_SIZE = 1.35;

/**
 * The title laid out: at the top of the safe area (below its top margin), in lines of whole words that fit the width,
 * two at most (the rest joins the last line, which is then drawn smaller), and gone after its seconds.
 */
function titleOf(title: { text: string; seconds: number }, box: CaptionBox, font: MeasuredFont, look: CaptionLook, options: LayoutOptions): CaptionTitle {
  const fontSize = Math.round((box.fontSize / (STYLE_PRESETS[look.style].size * look.scale)) * TITLE_SIZE);
  const room = box.width - box.marginLeft - box.marginRight - 2 * box.outline;
  const width = (line: string) => font.width(shownText(line, look, options.language), fontSize);
  const lines: string[] = [];
  for (const word of title.text.trim().split(/\s+/u)) {
    const last = lines.at(-1);
    if (last !== undefined && (width(`${last} ${word}`) <= room || lines.length === TITLE_LINES)) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  const widest = Math.max(1, ...lines.map(width));
  const frames = frameCount(options.speech, options.fps);
  return {
    lines,
    endFrame: Math.min(frames, Math.max(1, Math.round(title.seconds * options.fps))),
    top: box.marginTop,
    fontSize,
    fit: widest > room ? Math.floor((100 * room) / widest) : 100,
  };
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

/**
 * A lit word's first frames, one state each, growing through POP_SIZES over about POP_SECONDS (at least one frame
 * each of the sizes that fit in that time and in the state), then the rest at its size.
 */
function popping(state: CaptionState, fps: number): CaptionState[] {
  const steps = Math.min(state.endFrame - state.startFrame - 1, Math.max(1, Math.round(POP_SECONDS * fps)), POP_SIZES.length - 1);
  if (steps <= 0) return [state];
  const growing = POP_SIZES.slice(0, steps).map((grow, step) => ({ ...state, startFrame: state.startFrame + step, endFrame: state.startFrame + step + 1, grow }));
  return [...growing, { ...state, startFrame: state.startFrame + steps }];
}

/** Frames where the picture changes, plus the first and the last: the only frames worth encoding. */
export function keyFrames(captions: Pick<Captions, 'frames' | 'states' | 'title'>): number[] {
  const frames = new Set([0, captions.frames - 1]);
  if (captions.title && captions.title.endFrame < captions.frames) frames.add(captions.title.endFrame);
  for (const state of captions.states) {
    frames.add(state.startFrame);
    if (state.endFrame < captions.frames) frames.add(state.endFrame);
  }
  return [...frames].sort((a, b) => a - b);
}
