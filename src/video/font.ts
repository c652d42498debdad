import { createRequire } from 'node:module';
import path from 'node:path';
import * as fontkit from 'fontkit';
import { AppError } from '../errors.js';

/**
 * The captions font ships with the project (npm `dejavu-fonts-ttf`, Bitstream Vera licence with DejaVu changes
 * in the public domain), so captions look the same on a machine without system fonts. libass reads it from
 * FONTS_DIR; fontkit measures it here with the same metrics.
 */
export const FONTS_DIR = path.join(path.dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')), 'ttf');

export const CAPTION_FONT = {
  family: 'DejaVu Sans',
  bold: true,
  file: path.join(FONTS_DIR, 'DejaVuSans-Bold.ttf'),
} as const;

/** Code points that draw nothing of their own: spacing, controls, format characters, variation selectors. */
const INVISIBLE = /[\s\p{Cc}\p{Cf}\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}]/u;

export interface MeasuredFont {
  /** Characters the font has no glyph for, each once, in order of appearance. */
  missingCharacters(text: string): string[];
  /** Advance width in pixels of one line of text at an ASS font size (libass scales by ascender + descender). */
  width(text: string, fontSize: number): number;
}

let loaded: MeasuredFont | undefined;

/** The captions font, opened once per process. */
export function captionFont(): MeasuredFont {
  loaded ??= openFont(CAPTION_FONT.file);
  return loaded;
}

function openFont(file: string): MeasuredFont {
  const font = fontkit.openSync(file);
  if (!('layout' in font)) throw new Error(`${file} is a font collection`);
  const os2 = font['OS/2'];
  // libass asks FreeType for a "real dimension" size: the font size is winAscent + winDescent in pixels.
  const unitsPerSize = os2.winAscent + os2.winDescent || font.ascent - font.descent;
  const widths = new Map<string, number>();
  return {
    missingCharacters(text) {
      const missing = new Set<string>();
      for (const character of text) {
        if (!INVISIBLE.test(character) && !font.hasGlyphForCodePoint(character.codePointAt(0) as number)) missing.add(character);
      }
      return [...missing];
    },
    width(text, fontSize) {
      let units = widths.get(text);
      if (units === undefined) {
        units = font.layout(text).advanceWidth;
        if (widths.size > 10_000) widths.clear();
        widths.set(text, units);
      }
      return (units / unitsPerSize) * fontSize;
    },
  };
}

/** Throws UNSUPPORTED_TEXT (422) naming the characters the captions font cannot draw; we never draw boxes. */
export function assertDrawable(text: string, font: MeasuredFont = captionFont()): void {
  const missing = font.missingCharacters(text);
  if (missing.length === 0) return;
  const shown = missing
    .slice(0, 8)
    .map((character) => `${character} (U+${(character.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')})`)
    .join(', ');
  throw new AppError('UNSUPPORTED_TEXT', {
    field: 'text',
    message:
      `The captions font (DejaVu Sans) cannot draw ${shown}${missing.length > 8 ? ', …' : ''}. ` +
      'It covers Latin, Greek, Cyrillic, Armenian, Georgian, Hebrew and Arabic, not CJK, Indic or Thai scripts nor most emoji; ' +
      'remove those characters or send "subtitles": false.',
  });
}
