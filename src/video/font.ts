import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as Fontkit from 'fontkit';
import { AppError } from '../errors.js';
import { isEmoji } from '../engines/emoji-text.js';
import { twemojiName } from './twemoji.js';

/**
 * Caption fonts ship with the project, so captions look the same on a machine without system fonts: DejaVu Sans
 * (npm `dejavu-fonts-ttf`, Bitstream Vera licence with DejaVu changes in the public domain), Noto and Anton (npm
 * `@expo-google-fonts/*`, SIL OFL). libass gets only the files a script names (fontsDirFor); fontkit measures the
 * same files here, with the same fallback.
 */
const packageDir = (name: string) => path.dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));

/** DejaVu's own folder (every DejaVu face): the captions font folder before font families existed. */
export const FONTS_DIR = path.join(packageDir('dejavu-fonts-ttf'), 'ttf');

/** One font file as libass selects it: by family name, bold or not. */
export interface FontFace {
  family: string;
  bold: boolean;
  file: string;
}

const expoFont = (name: string, file: string) => path.join(packageDir(`@expo-google-fonts/${name}`), file);

const FACES = {
  dejavuSans: { family: 'DejaVu Sans', bold: true, file: path.join(FONTS_DIR, 'DejaVuSans-Bold.ttf') },
  notoSerif: { family: 'Noto Serif', bold: true, file: expoFont('noto-serif', '700Bold/NotoSerif_700Bold.ttf') },
  // One weight only, already heavy: asking libass for bold would embolden it further.
  anton: { family: 'Anton', bold: false, file: expoFont('anton', '400Regular/Anton_400Regular.ttf') },
  // Simplified and traditional hanzi, kana and kanji, drawn in Chinese (mainland) glyph forms.
  notoSansSC: { family: 'Noto Sans SC', bold: true, file: expoFont('noto-sans-sc', '700Bold/NotoSansSC_700Bold.ttf') },
  // The same characters in Japanese forms (今, 骨, 直 differ), for Japanese voices.
  notoSansJP: { family: 'Noto Sans JP', bold: true, file: expoFont('noto-sans-jp', '700Bold/NotoSansJP_700Bold.ttf') },
  // In traditional Chinese forms (Taiwan), for zh-Hant, zh-TW, zh-HK and Cantonese voices.
  notoSansTC: { family: 'Noto Sans TC', bold: true, file: expoFont('noto-sans-tc', '700Bold/NotoSansTC_700Bold.ttf') },
  // Hangul, which SC lacks.
  notoSansKR: { family: 'Noto Sans KR', bold: true, file: expoFont('noto-sans-kr', '700Bold/NotoSansKR_700Bold.ttf') },
  notoSansDevanagari: { family: 'Noto Sans Devanagari', bold: true, file: expoFont('noto-sans-devanagari', '700Bold/NotoSansDevanagari_700Bold.ttf') },
  notoSansThai: { family: 'Noto Sans Thai', bold: true, file: expoFont('noto-sans-thai', '700Bold/NotoSansThai_700Bold.ttf') },
  notoSansArabic: { family: 'Noto Sans Arabic', bold: true, file: expoFont('noto-sans-arabic', '700Bold/NotoSansArabic_700Bold.ttf') },
  // npm `@embedpdf/fonts-hebrew` (SIL OFL): its package exports only its module, the fonts sit beside it.
  notoSansHebrew: {
    family: 'Noto Sans Hebrew',
    bold: true,
    file: path.join(path.dirname(createRequire(import.meta.url).resolve('@embedpdf/fonts-hebrew')), '..', 'fonts', 'NotoSansHebrew-Bold.ttf'),
  },
} as const satisfies Record<string, FontFace>;

/**
 * After a family's own face: Arabic and Hebrew in Noto's faces (DejaVu Sans, the `sans` face, draws them itself),
 * then DejaVu, so an alphabet the face lacks (Cyrillic for Anton, Greek for Noto Serif) is drawn by one face (the
 * CJK fonts hold a few Cyrillic and Greek letters, not all), then the scripts it lacks; the CJK face in the glyph
 * forms of the voice's language (cjkFace).
 */
function fallbackChain(cjk: FontFace): FontFace[] {
  return [FACES.notoSansArabic, FACES.notoSansHebrew, FACES.dejavuSans, cjk, FACES.notoSansKR, FACES.notoSansDevanagari, FACES.notoSansThai];
}

/** The CJK face whose glyph forms a reader of `language` (BCP 47, the voice's) expects: Japanese, traditional or simplified Chinese. */
function cjkFace(language: string | undefined): FontFace {
  const tag = language?.toLowerCase() ?? '';
  if (/^ja(-|$)/.test(tag)) return FACES.notoSansJP;
  if (/^(yue|zh-(hant|tw|hk|mo))(-|$)/.test(tag) || /^zh-.*-hant(-|$)/.test(tag)) return FACES.notoSansTC;
  return FACES.notoSansSC;
}

/** The caption font families a request may choose, by name; `sans` is the default. */
export const CAPTION_FAMILIES = ['sans', 'serif', 'display'] as const;
export type CaptionFamily = (typeof CAPTION_FAMILIES)[number];
export const DEFAULT_CAPTION_FAMILY: CaptionFamily = 'sans';

const PRIMARY: Record<CaptionFamily, FontFace> = { sans: FACES.dejavuSans, serif: FACES.notoSerif, display: FACES.anton };

/** What the scripts of all families together draw, for UNSUPPORTED_TEXT. */
const COVERED =
  'Latin, Greek, Cyrillic, Armenian, Georgian, Hebrew, Arabic, Chinese (simplified and traditional), Japanese (kana and kanji), ' +
  'Korean (hangul), Devanagari and Thai';

export interface MeasuredFont {
  /** Characters no font draws, each once, in order of appearance. */
  missingCharacters(text: string): string[];
  /** Advance width in pixels of one line of text at an ASS font size (libass scales by ascender + descender). */
  width(text: string, fontSize: number): number;
}

/** A stretch of text drawn with one face, at `scale` % of the style's size (fallbackScale); or one emoji drawn as its Twemoji picture. */
export interface FontRun {
  text: string;
  face: FontFace;
  scale: number;
  /** The Twemoji name of the emoji this run is (twemoji.ts), drawn as a square of `emojiEms`. */
  emoji?: string;
}

/**
 * A run of one face as libass lays it out, in units of the ASS font size, at the run's own scale (FontRun.scale; the
 * style's size and a lit word's are the caller's): its advance, the line height its face asks above and below the
 * baseline (libass: OS/2 winAscent and winDescent, ass_font.c set_font_metrics), and its glyphs' ink as shaped
 * (outlines placed, marks included), up and down from the baseline.
 */
export interface RunMetrics {
  width: number;
  ascent: number;
  descent: number;
  inkTop: number;
  inkBottom: number;
}

/** A family as captions use it: its own face, the fallback chain after it, and text split the way libass draws it. */
export interface CaptionFont extends MeasuredFont {
  readonly family: CaptionFamily;
  /** The style's font; runs in other faces get an explicit `\fn` in the script. */
  readonly primary: FontFace;
  /** The text in runs, each in the first face of the chain that draws all of its grapheme clusters, each emoji a run of its own. */
  runs(text: string): FontRun[];
  /** The side of an emoji's square in units of the ASS font size: the primary face's em. */
  readonly emojiEms: number;
  /** RunMetrics of a run that is not an emoji (emoji are drawn in squares: ass.ts). */
  metrics(run: FontRun): RunMetrics;
}

/**
 * The caption font of a family for text in `language` (the voice's: it picks the CJK glyph forms), opened once per
 * process (fallback faces only when some text needs them).
 */
export function captionFont(family: CaptionFamily = DEFAULT_CAPTION_FAMILY, language?: string): CaptionFont {
  const cjk = cjkFace(language);
  const key = `${family} ${cjk.family}`;
  let font = families.get(key);
  if (!font) {
    font = familyFont(family, cjk);
    families.set(key, font);
  }
  return font;
}

const families = new Map<string, CaptionFont>();

/** libass's is_harfbuzz_ignorable (ass_shaper.c): code points HarfBuzz draws as nothing, never looked up in a font. */
const IGNORABLE: ReadonlyArray<readonly [number, number]> = [
  [0xad, 0xad],
  [0x34f, 0x34f],
  [0x61c, 0x61c],
  [0x17b4, 0x17b5],
  [0x180b, 0x180e],
  [0x200b, 0x200f],
  [0x202a, 0x202e],
  [0x2060, 0x206f],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
  [0xfff0, 0xfff8],
  [0x1d173, 0x1d17a],
  [0xe0000, 0xe0fff],
];

/** Whether libass looks the character up in a font: not a control (dropped), a space other than U+0020 (words end there) or an ignorable. */
function lookedUp(character: string): boolean {
  if (character === ' ') return true;
  if (/[\s\p{Cc}]/u.test(character)) return false;
  const point = character.codePointAt(0) as number;
  return !IGNORABLE.some(([from, to]) => point >= from && point <= to);
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

function familyFont(family: CaptionFamily, cjk: FontFace): CaptionFont {
  const primary = PRIMARY[family];
  const chain = [primary, ...fallbackChain(cjk).filter((face) => face !== primary)].map(measuredFace);
  /** The first face that draws every looked-up code point of a cluster; none for a cluster of invisible ones. */
  const faceFor = (cluster: string) => {
    const points = [...cluster].filter(lookedUp).map((character) => character.codePointAt(0) as number);
    if (points.length === 0) return undefined;
    return chain.find((face) => points.every((point) => face.has(point)));
  };
  const runs = (text: string): MeasuredRun[] => {
    const found: MeasuredRun[] = [];
    for (const { segment } of graphemes.segment(text)) {
      const last = found.at(-1);
      const emoji = pictureOf(segment, faceFor);
      if (emoji) {
        found.push({ text: segment, face: chain[0] as MeasuredFace, emoji });
        continue;
      }
      const own = faceFor(segment);
      // An emoji with no picture is drawn by a face that has it, else left out.
      if (!own && isEmoji(segment)) continue;
      // What no face draws stays with the run before (it was refused before layout, when there is one).
      const face = own ?? (last && !last.emoji ? last.face : (chain[0] as MeasuredFace));
      if (last?.face === face && !last.emoji) last.text += segment;
      else found.push({ text: segment, face });
    }
    return found;
  };
  const emojiEms = () => (chain[0] as MeasuredFace).em();
  const widths = new Map<string, number>();
  const scales = new Map<MeasuredFace, number>();
  const scaleOf = (face: MeasuredFace) => {
    let scale = scales.get(face);
    if (scale === undefined) {
      scale = fallbackScale(measuredFace(primary), face);
      scales.set(face, scale);
    }
    return scale;
  };
  return {
    family,
    primary,
    get emojiEms() {
      return emojiEms();
    },
    runs: (text) => runs(text).map((run) => ({ text: run.text, face: run.face.face, scale: run.emoji ? 100 : scaleOf(run.face), ...(run.emoji ? { emoji: run.emoji } : {}) })),
    metrics({ face, text, scale }) {
      const { ems, top, bottom } = measuredFace(face).inked(text);
      const [ascent, descent] = measuredFace(face).lineExtents();
      return { width: (ems * scale) / 100, ascent: (ascent * scale) / 100, descent: (descent * scale) / 100, inkTop: (top * scale) / 100, inkBottom: (bottom * scale) / 100 };
    },
    missingCharacters(text) {
      const missing = new Set<string>();
      for (const { segment } of graphemes.segment(text)) {
        // Emoji are drawn as pictures, by a face, or not at all: never refused.
        if (isEmoji(segment) || pictureOf(segment, faceFor)) continue;
        for (const character of segment) {
          if (!lookedUp(character) || missing.has(character)) continue;
          const point = character.codePointAt(0) as number;
          if (!chain.some((face) => face.has(point))) missing.add(character);
        }
      }
      return [...missing];
    },
    width(text, fontSize) {
      let ems = widths.get(text);
      if (ems === undefined) {
        ems = runs(text).reduce((sum, run) => sum + (run.emoji ? emojiEms() : (run.face.ems(run.text) * scaleOf(run.face)) / 100), 0);
        if (widths.size > 10_000) widths.clear();
        widths.set(text, ems);
      }
      return ems * fontSize;
    },
  };
}

interface MeasuredRun {
  text: string;
  face: MeasuredFace;
  emoji?: string;
}

const PICTOGRAPH = /^\p{Extended_Pictographic}/u;

/**
 * The Twemoji picture a cluster is drawn as: an emoji's, or a pictograph's shown as text by default (☺, ✈) that no
 * face draws, rather than leave it out.
 */
function pictureOf(cluster: string, faceFor: (cluster: string) => MeasuredFace | undefined): string | undefined {
  if (isEmoji(cluster)) return twemojiName(cluster);
  return PICTOGRAPH.test(cluster) && !cluster.includes('\uFE0E') && !faceFor(cluster) ? twemojiName(cluster) : undefined;
}

interface MeasuredFace {
  face: FontFace;
  /** The em in units of the ASS font size. */
  em(): number;
  has(codePoint: number): boolean;
  /** Advance width of a run in units of the ASS font size. */
  ems(text: string): number;
  /** Height of a capital in units of the ASS font size (OS/2's, or the H's outline where the table has none), if it has capitals. */
  capHeight(): number | undefined;
  /** What a line of this face takes above and below the baseline, in units of the ASS font size: libass's ascender and descender. */
  lineExtents(): readonly [number, number];
  /** A run's advance and its shaped glyphs' ink above and below the baseline (negative: below), in units of the ASS font size. */
  inked(text: string): { ems: number; top: number; bottom: number };
}

/**
 * The size (in %, whole) at which a fallback face is drawn beside the primary one so that their capitals stand as
 * tall: libass sizes a face by its ascent plus descent, which fonts for scripts with tall stacks (Devanagari, Arabic)
 * or CJK make large, so at one font size their letters come out smaller (Devanagari at 60 % of DejaVu's, Korean at
 * 82 %). Noto's faces share one cap height per em, so this also gives them one em. 100 where either has no capitals.
 */
function fallbackScale(primary: MeasuredFace, face: MeasuredFace): number {
  if (face === primary) return 100;
  const [main, other] = [primary.capHeight(), face.capHeight()];
  return main && other ? Math.round((100 * main) / other) : 100;
}

const faces = new Map<FontFace, MeasuredFace>();

let fontkitModule: typeof Fontkit | undefined;
/** fontkit (0.3 s to load, with the Unicode tables it inflates) is required by the first measurement, not at start. */
function fontkit(): typeof Fontkit {
  return (fontkitModule ??= createRequire(import.meta.url)('fontkit') as typeof Fontkit);
}

/** A face measured by fontkit; its file is read only when first asked (the CJK files are 6–10 MB). */
function measuredFace(face: FontFace): MeasuredFace {
  const known = faces.get(face);
  if (known) return known;
  let opened: { font: Fontkit.Font; unitsPerSize: number } | undefined;
  const open = () => {
    if (opened) return opened;
    const font = fontkit().openSync(face.file);
    if (!('layout' in font)) throw new Error(`${face.file} is a font collection`);
    const os2 = font['OS/2'];
    // libass asks FreeType for a "real dimension" size: the font size is winAscent + winDescent in pixels.
    opened = { font, unitsPerSize: os2.winAscent + os2.winDescent || font.ascent - font.descent };
    return opened;
  };
  const inks = new Map<string, { ems: number; top: number; bottom: number }>();
  const measured: MeasuredFace = {
    face,
    em() {
      const { font, unitsPerSize } = open();
      return font.unitsPerEm / unitsPerSize;
    },
    has: (codePoint) => open().font.hasGlyphForCodePoint(codePoint),
    ems(text) {
      const { font, unitsPerSize } = open();
      return font.layout(text).advanceWidth / unitsPerSize;
    },
    capHeight() {
      const { font, unitsPerSize } = open();
      const table = font['OS/2'].capHeight;
      if (table > 0) return table / unitsPerSize;
      if (!font.hasGlyphForCodePoint(0x48)) return undefined;
      const { bbox } = font.glyphForCodePoint(0x48);
      return (bbox.maxY - Math.max(0, bbox.minY)) / unitsPerSize;
    },
    lineExtents() {
      const { font, unitsPerSize } = open();
      const os2 = font['OS/2'];
      // libass takes the Windows metrics where they add up to something, else the font's own (set_font_metrics).
      return os2.winAscent + os2.winDescent ? [os2.winAscent / unitsPerSize, os2.winDescent / unitsPerSize] : [font.ascent / unitsPerSize, -font.descent / unitsPerSize];
    },
    inked(text) {
      let found = inks.get(text);
      if (found) return found;
      const { font, unitsPerSize } = open();
      const laid = font.layout(text);
      let [top, bottom] = [-Infinity, Infinity];
      laid.glyphs.forEach(({ bbox: { minY, maxY } }, index) => {
        const lift = laid.positions[index]?.yOffset ?? 0;
        // A blank glyph (a space) has no ink and an empty box.
        if (Number.isFinite(minY) && Number.isFinite(maxY) && maxY > minY) [top, bottom] = [Math.max(top, maxY + lift), Math.min(bottom, minY + lift)];
      });
      found = { ems: laid.advanceWidth / unitsPerSize, top: Number.isFinite(top) ? top / unitsPerSize : 0, bottom: Number.isFinite(bottom) ? bottom / unitsPerSize : 0 };
      if (inks.size > 10_000) inks.clear();
      inks.set(text, found);
      return found;
    },
  };
  faces.set(face, measured);
  return measured;
}

/** Throws UNSUPPORTED_TEXT (422) naming the characters no caption font can draw; we never draw boxes. */
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
      `The caption fonts cannot draw ${shown}${missing.length > 8 ? ', …' : ''}. ` +
      `They cover ${COVERED} (emoji are drawn as pictures); remove those characters or send "subtitles": false.`,
  });
}

const FACE_BY_FAMILY = new Map<string, FontFace>(Object.values(FACES).map((face) => [face.family, face]));

/**
 * A folder beside an ASS script with links to the font files the script names (its style's font and the `\fn`
 * overrides we write; user text cannot spell one, see escapeAssText), for the `ass` filter's `fontsdir`: libass
 * reads every file there into memory on each run, so it holds nothing else. Synchronous, as filter graphs are built.
 */
export function fontsDirFor(scriptFile: string): string {
  const script = readFileSync(scriptFile, 'utf8');
  const names = [...script.matchAll(/^Style: [^,\n]*,([^,\n]*)/gm), ...script.matchAll(/\{\\fn([^\\}]*)/g)].map((match) => match[1] as string);
  const dir = `${scriptFile.replace(/\.ass$/, '')}-fonts`;
  mkdirSync(dir, { recursive: true });
  for (const name of new Set(names)) {
    const face = FACE_BY_FAMILY.get(name);
    // libass would look for it among the system's fonts.
    if (!face) throw new Error(`The captions script names a font voxreel does not ship: ${name}`);
    try {
      symlinkSync(face.file, path.join(dir, path.basename(face.file)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return dir;
}

