import { DEFAULT_CAPTION_FAMILY, type CaptionFamily } from './font.js';
import type { PlatformName } from './platforms.js';


export const CAPTION_POSITIONS = ['top', 'middle', 'bottom'] as const;
export type CaptionPosition = (typeof CAPTION_POSITIONS)[number];

/** How a style lays captions out and draws them. */
export interface StylePreset {
  /** What the API's documentation says of it. */
  description: string;
  /** Lines per cue, and words per cue for styles that show a few at a time. */
  maxLines: number;
  maxWords?: number;
  /** Font size, times the frame's caption size (frame.ts). */
  size: number;
  /** The word being spoken is drawn in the highlight colour, `litScale` % of the size. */
  highlight: boolean;
  litScale: number;
  /** A translucent box behind each line instead of an outline. */
  box: boolean;
  position: CaptionPosition;
  /** Outline width and shadow depth, times the font size (a box's padding for boxed styles). */
  outline: number;
  shadow: number;
  /** The lit word grows in over about POP_SECONDS instead of being lit at its size at once. */
  pop?: boolean;
}

/**
 * The caption styles, presets a person would recognise from the apps that make such videos: a new style is one
 * entry here (the API's `caption_style` and its documentation are made from this table).
 */
export const STYLE_PRESETS = {
  // What voxreel always made.
  karaoke: {
    description: 'up to two lines at the bottom, the word being spoken lit.',
    maxLines: 2, size: 1, highlight: true, litScale: 100, box: false, position: 'bottom', outline: 1 / 16, shadow: 0,
  },
  // TikTok, Shorts.
  bold: {
    description: 'one to three big words at a time in the middle, the spoken word lit and a little larger.',
    maxLines: 1, maxWords: 3, size: 1.5, highlight: true, litScale: 112, box: false, position: 'middle', outline: 1 / 16, shadow: 0,
  },
  // CapCut's auto-captions, Submagic: what creators post.
  pop: {
    description:
      'one to three words at a time, big (up to about 8 % of a 9:16 frame\'s height, one size for the whole video: the largest at which every phrase fits a line) in the middle of the safe area, with a thick outline and a soft shadow; the spoken word lit and popping in (from 80 % of its size over about 80 ms).',
    maxLines: 1, maxWords: 3, size: 2.1, highlight: true, litScale: 110, box: false, position: 'middle', outline: 0.12, shadow: 0.05, pop: true,
  },
  // Television, YouTube.
  subtitle: {
    description: 'plain subtitles on a translucent box at the bottom, no word lit.',
    maxLines: 2, size: 0.85, highlight: false, litScale: 100, box: true, position: 'bottom', outline: 1 / 6, shadow: 0,
  },
} as const satisfies Record<string, StylePreset>;

export type CaptionStyleName = keyof typeof STYLE_PRESETS;
export const CAPTION_STYLES = Object.keys(STYLE_PRESETS) as CaptionStyleName[];

/** Everything a request may change about the captions; `resolveLook` fills in what it leaves out. */
export interface CaptionLook {
  style: CaptionStyleName;
  family: CaptionFamily;
  /** RGB hex without `#`. */
  textColour: string;
  highlightColour: string;
  position: CaptionPosition;
  /** Times the style's own size, 0.5 to 2. */
  scale: number;
  /** `upper`: drawn in capitals (the captions files keep the text as written). */
  textCase: CaptionCase;
  /** Outline width, times the font size, in place of the style's own. */
  outline?: number;
  /** A box in the highlight colour behind the word being spoken, the word itself in the text colour (styles that light a word). */
  highlightBox?: boolean;
  /** The platform the video is for: its safe area (platforms.ts). */
  platform?: PlatformName;
}

export const CAPTION_CASES = ['as-written', 'upper'] as const;
export type CaptionCase = (typeof CAPTION_CASES)[number];

/** Seconds a popping word takes to grow to its size, and the sizes it shows on the way (% of its lit size). */
export const POP_SECONDS = 0.08;
export const POP_SIZES = [80, 92, 100] as const;

/** Caption text as the look draws it (and so measures it). */
export function shownText(text: string, look: Pick<CaptionLook, 'textCase'>, language?: string): string {
  if (look.textCase !== 'upper') return text;
  try {
    return text.toLocaleUpperCase(language);
  } catch {
    return text.toUpperCase();
  }
}

export const CAPTION_COLOURS = { text: 'FFFFFF', highlight: 'FFD23F', outline: '000000' } as const;

export const DEFAULT_LOOK: CaptionLook = {
  style: 'karaoke',
  family: DEFAULT_CAPTION_FAMILY,
  textColour: CAPTION_COLOURS.text,
  highlightColour: CAPTION_COLOURS.highlight,
  position: STYLE_PRESETS.karaoke.position,
  scale: 1,
  textCase: 'as-written',
};

/** A look from what a request gave: the style's own position unless one is asked for. */
export function resolveLook(asked: Partial<CaptionLook> = {}): CaptionLook {
  const style = asked.style ?? DEFAULT_LOOK.style;
  const defined = Object.fromEntries(Object.entries(asked).filter(([, value]) => value !== undefined)) as Partial<CaptionLook>;
  return { ...DEFAULT_LOOK, position: STYLE_PRESETS[style].position, ...defined, style };
}
