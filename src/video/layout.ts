import type { Speech } from '../speech/speech.js';
import type { AspectRatio } from './frame-shapes.js';
import { captionFont, type MeasuredFont } from './font.js';
import { POP_SECONDS, POP_SIZES, resolveLook, shownText, STYLE_PRESETS, type CaptionLook } from './caption-style.js';
import { timedWords } from '../speech/words.js';
import { breakIntoCues, HOLD_SECONDS, MIN_CUE_SECONDS, phrasesOf, type CueGroup } from '../speech/captions/cues.js';
import { NO_WORD, titlesOf, type CaptionState, type Captions, type CaptionTitle, type Cue } from './captions.js';
import { chapterTimes, type TimedChapter } from '../speech/chapters.js';
import { layoutTitle } from './title.js';
import { turnOfWord } from '../speech/dialogue.js';
import { captionSpeakers, type SpeakerLook } from './speakers.js';
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
  /** A dialogue's speakers' looks, by voice id or name (speakers.ts). */
  speakers?: Readonly<Record<string, SpeakerLook>>;
}

/** Seconds a chapter's card shows from its start (less where the next chapter starts sooner). */
export const CARD_SECONDS = 3;

export function frameCount(speech: Speech, fps: number): number {
  return Math.max(1, Math.round((speech.samples.length / speech.sampleRate) * fps));
}

/**
 * A style of a few big words is drawn at one size for the whole video (never a cue shrunk on its own): the largest,
 * in steps of SIZE_STEP, at which every phrase (a word in scripts written with spaces) fits a line and no cue flashes
 * by for want of room for two words, down to SMALLEST of the style's size (and never below karaoke's); a phrase too
 * wide even then is split at its words, and a word cut, as in other styles.
 */
const SIZE_STEP = 0.05;
const SMALLEST = 0.5;

/** Words, cues of at most two measured lines, and the frames where the picture changes. */
export function layoutCaptions(options: LayoutOptions): Captions {
  const look = resolveLook(options.look);
  const preset = STYLE_PRESETS[look.style];
  const font = options.font ?? captionFont(look.family, options.language);
  const frames = frameCount(options.speech, options.fps);
  const words = timedWords(options.text, options.speech);
  const toFrame = (seconds: number) => Math.min(frames, Math.max(0, Math.ceil(seconds * options.fps - 1e-6)));
  const wordFrames = words.map((word) => Math.min(frames - 1, toFrame(word.start)));
  const width = (line: string, box: CaptionBox) => font.width(shownText(line, look, options.language), box.fontSize);
  const boxAt = (share: number) => captionBox(options.size, options.aspectRatio, { ...look, scale: look.scale * share });
  const groupsIn = (box: CaptionBox) => breakIntoCues(words, (line) => width(line, box) <= box.maxLineWidth, { ...preset, language: options.language, measure: (line) => width(line, box) });
  // The sizes tried, largest first: the style's own only, for styles of lines of many words.
  const smallest = 'maxWords' in preset ? Math.min(1, Math.max(SMALLEST, 1 / preset.size)) : 1;
  const shares = Array.from({ length: Math.floor((1 - smallest) / SIZE_STEP + 1e-9) + 1 }, (_, step) => 1 - step * SIZE_STEP);
  const phrases = 'maxWords' in preset ? phrasesOf(words, options.language) : [];
  const wordsFit = (box: CaptionBox) => phrases.every((phrase) => width(phrase, box) <= box.maxLineWidth);
  const flashes = (groups: readonly CueGroup[]) => groups.filter((group, index) => Math.min(groups[index + 1]?.start ?? Infinity, group.end + HOLD_SECONDS) - group.start < MIN_CUE_SECONDS).length;
  const fitting = shares.findIndex((share) => wordsFit(boxAt(share)));
  let at = fitting < 0 ? shares.length - 1 : fitting;
  let groups = groupsIn(boxAt(shares[at] as number));
  for (let next = at + 1; next < shares.length && flashes(groups) > 0; next++) {
    const smaller = groupsIn(boxAt(shares[next] as number));
    if (flashes(smaller) < flashes(groups)) [at, groups] = [next, smaller];
  }
  // A title is a hook, the largest text on screen: the captions are drawn smaller where that makes it one.
  const endFrame = Math.min(frames, Math.max(1, Math.round((options.title?.seconds ?? 0) * options.fps)));
  const titleAt = (share: number) => options.title && layoutTitle({ text: options.title.text, endFrame }, boxAt(share), font, look, options.language);
  let title = titleAt(shares[at] as number);
  for (let next = at + 1; title && !title.hook && next < shares.length; next++) {
    const smaller = titleAt(shares[next] as number);
    if (smaller?.hook) [at, title, groups] = [next, smaller, groupsIn(boxAt(shares[next] as number))];
  }
  const box = boxAt(shares[at] as number);
  const chapters = options.speech.chapters && chapterTimes(options.speech.chapters, words, options.speech.duration);
  const cards = chapters && chapterCards(chapters, { frames, fps: options.fps, after: title?.title.endFrame ?? 0, toFrame }, (text, startFrame, endFrame) => layoutTitle({ text, startFrame, endFrame }, box, font, look, options.language).title);
  const { turns } = options.speech;
  const speakers = turns && captionSpeakers(turns, look, options.speakers);
  const turnOf = turns && turnOfWord(turns, words);
  const cues = groups
    .map(({ start, end, lines }): Cue => {
      const first = lines[0]?.[0]?.word ?? 0;
      const startFrame = Math.max(wordFrames[first] as number, Math.min(frames - 1, toFrame(start)));
      const speaker = speakers?.findIndex((one) => one.voice === turnOf?.(first)?.voice) ?? -1;
      return { startFrame, endFrame: Math.max(startFrame + 1, toFrame(end + HOLD_SECONDS)), lines, ...(speaker >= 0 ? { speaker } : {}) };
    })
    .map((cue, index, all) => ({ ...cue, endFrame: Math.min(cue.endFrame, all[index + 1]?.startFrame ?? frames) }))
    .filter((cue) => cue.endFrame > cue.startFrame);
  const lit = preset.highlight ? captionStates(cues, wordFrames) : cues.map((cue, index) => ({ startFrame: cue.startFrame, endFrame: cue.endFrame, cue: index, word: NO_WORD }));
  const states = 'pop' in preset && preset.pop ? lit.flatMap((state) => popping(state, options.fps)) : lit;
  return { fps: options.fps, frames, box, look, language: options.language, words, wordFrames, cues, states, ...(title ? { title: title.title } : {}), ...(cards?.length ? { cards } : {}), ...(chapters ? { chapters } : {}), ...(speakers ? { speakers } : {}) };
}

/**
 * A card for each chapter from the frame its title's first word lights up, CARD_SECONDS long (until the next one
 * where it starts sooner); none while the hook shows (`after`: its end), so a first chapter under a hook has none.
 */
function chapterCards(
  chapters: readonly TimedChapter[],
  timeline: { frames: number; fps: number; after: number; toFrame: (seconds: number) => number },
  lay: (text: string, startFrame: number, endFrame: number) => CaptionTitle,
): CaptionTitle[] {
  const starts = chapters.map((chapter) => Math.min(timeline.frames - 1, timeline.toFrame(chapter.start)));
  return chapters.flatMap((chapter, index) => {
    const startFrame = starts[index] as number;
    const endFrame = Math.min(timeline.frames, startFrame + Math.round(CARD_SECONDS * timeline.fps), starts[index + 1] ?? timeline.frames);
    return startFrame >= timeline.after && endFrame > startFrame ? [lay(chapter.title, startFrame, endFrame)] : [];
  });
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
export function keyFrames(captions: Pick<Captions, 'frames' | 'states' | 'title' | 'cards'>): number[] {
  const frames = new Set([0, captions.frames - 1]);
  for (const title of titlesOf(captions)) {
    frames.add(title.startFrame);
    if (title.endFrame < captions.frames) frames.add(title.endFrame);
  }
  for (const state of captions.states) {
    frames.add(state.startFrame);
    if (state.endFrame < captions.frames) frames.add(state.endFrame);
  }
  return [...frames].sort((a, b) => a - b);
}
