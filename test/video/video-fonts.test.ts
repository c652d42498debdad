import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import type { AspectRatio, VideoResolution } from '../../src/api/video.js';
import { assScript, escapeAssText } from '../../src/video/ass.js';
import type { CaptionPiece, Captions } from '../../src/video/captions.js';
import { joinLine } from '../../src/speech/captions/cues.js';
import { assertDrawable, CAPTION_FAMILIES, captionFont, FONTS_DIR, fontsDirFor, type CaptionFamily } from '../../src/video/font.js';
import { frameSize } from '../../src/video/frame.js';
import { layoutCaptions } from '../../src/video/layout.js';
import { filterValue, PICTURE, renderVideo } from '../../src/video/render.js';
import type { ErrorBody } from '../../src/api/errors.js';
import { useTestApp } from '../helpers/helpers.js';
import { decodeFrame, ffmpeg, frameHashes, runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { captionPixels, INJECTIONS, toneSpeech } from '../helpers/video-helpers.js';

const FPS = 30;
const work = useTempDir('voxreel-fonts-');

/** A run without spaces of each script a fallback font draws (layout cuts Chinese, Japanese and Thai into words), and one the family's own face draws. */
const SAMPLES = {
  chinese: '你好世界，繁體中文',
  japanese: 'こんにちは、カナと漢字',
  korean: '한국어자막입니다',
  hindi: 'नमस्ते',
  thai: 'สวัสดีครับ',
  latin: 'Captions',
} as const;
type Sample = keyof typeof SAMPLES;
const SAMPLE_NAMES = Object.keys(SAMPLES) as Sample[];
const SAMPLE_TEXT = Object.values(SAMPLES).join(' ');

const LONG_CHINESE =
  '每天早上，港口总是比城镇更早醒来。渔船驶过灯塔，街角的面包店开始烤第一批面包。到了七点，市场的摊位都开张了，咖啡的香味飘过狭窄的街道，' +
  '游客们慢慢地走向海边，孩子们在广场上追逐鸽子，一天就这样开始了。';
const LONG_THAI =
  'ทุกเช้าท่าเรือตื่นขึ้นก่อนเมืองเรือประมงแล่นผ่านประภาคารขณะที่ร้านเบเกอรี่ตรงหัวมุมเริ่มอบขนมปังชุดแรกพอเจ็ดโมงแผงตลาดก็เปิดและกลิ่นกาแฟลอยไปตามถนนแคบๆ';

interface Rendered {
  file: string;
  captions: Captions;
}

async function render(text: string, family: CaptionFamily, options: { resolution?: VideoResolution; aspectRatio?: AspectRatio; tag?: string; gapSeconds?: number } = {}): Promise<Rendered> {
  const { resolution = '720p', aspectRatio = '9:16', tag = '', gapSeconds } = options;
  const size = frameSize(resolution, aspectRatio);
  const speech = toneSpeech(text, { gapSeconds });
  const captions = layoutCaptions({ text, speech, size, aspectRatio, fps: FPS, look: { family } });
  const file = path.join(work, `${family}-${resolution}-${aspectRatio.replace(':', 'x')}-${createHash('md5').update(text).digest('hex').slice(0, 8)}${tag}.mp4`);
  await renderVideo(ffmpeg, { speech, size, fps: FPS, frameRate: 'constant', captions, output: file, timeoutMs: 60_000 });
  return { file, captions };
}

/** A line as drawn: its pieces joined, with a space only where the text has one. */
function lineText(line: readonly CaptionPiece[]): string {
  return joinLine(line, (index) => (line[index] as CaptionPiece).text);
}

/** A frame in the middle of the first caption state that shows word `word`, and that state's cue. */
function shownWord(captions: Captions, word: number): { frame: number; cue: number } {
  const state = captions.states.find((candidate) => candidate.word === word);
  if (!state) throw new Error(`word ${word} is never shown`);
  return { frame: Math.floor((state.startFrame + state.endFrame) / 2), cue: state.cue };
}

function frameOfWord(captions: Captions, word: number): number {
  return shownWord(captions, word).frame;
}

/** The words layout made of `sample`, a part of the request `text` (at its first occurrence). */
function wordsOf(captions: Captions, text: string, sample: string): number[] {
  const start = text.indexOf(sample);
  const words = captions.words.flatMap((word, index) => (word.offset >= start && word.offset < start + sample.length ? [index] : []));
  if (start < 0 || captions.words[words[0] ?? -1]?.offset !== start) throw new Error(`no word begins "${sample}"`);
  return words;
}

/** The first word layout made of `sample` in `text`. */
function firstWordOf(captions: Captions, text: string, sample: string): number {
  return wordsOf(captions, text, sample)[0] as number;
}

/** Runs fontconfig with no font directory at all while `body` runs: libass then sees only the fonts we hand it. */
async function withoutSystemFonts<T>(body: () => Promise<T>): Promise<T> {
  const config = path.join(work, 'no-fonts.conf');
  await writeFile(config, `<?xml version="1.0"?>\n<fontconfig><cachedir>${path.join(work, 'fc-cache')}</cachedir></fontconfig>\n`);
  const before = process.env.FONTCONFIG_FILE;
  process.env.FONTCONFIG_FILE = config;
  try {
    return await body();
  } finally {
    if (before === undefined) delete process.env.FONTCONFIG_FILE;
    else process.env.FONTCONFIG_FILE = before;
  }
}

function refusal(text: string, family?: CaptionFamily): AppError {
  try {
    assertDrawable(text, family && captionFont(family));
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error(`${text} was not refused`);
}

describe('font families', () => {
  it('are named for the request option, with the family’s face first', () => {
    expect(CAPTION_FAMILIES).toEqual(['sans', 'serif', 'display']);
    expect(CAPTION_FAMILIES.map((family) => captionFont(family).primary.family)).toEqual(['DejaVu Sans', 'Noto Serif', 'Anton']);
    expect(captionFont()).toBe(captionFont('sans'));
  });

  it.each(CAPTION_FAMILIES)('%s draws every script of the samples, each run with the first face that has it', (family) => {
    const font = captionFont(family);
    expect(font.missingCharacters(`${SAMPLE_TEXT} Привет שלום مرحبا`)).toEqual([]);
    const faces = (text: string) => font.runs(text).map((run) => run.face.family);
    expect(faces(SAMPLES.chinese)).toEqual(['Noto Sans SC']);
    expect(faces(SAMPLES.japanese)).toEqual(['Noto Sans SC']);
    expect(faces(SAMPLES.korean)).toEqual(['Noto Sans KR']);
    expect(faces(SAMPLES.hindi)).toEqual(['Noto Sans Devanagari']);
    expect(faces(SAMPLES.thai)).toEqual(['Noto Sans Thai']);
    expect(faces(SAMPLES.latin)).toEqual([font.primary.family]);
    // Runs put back together are the text; a space stays with the family's face.
    const mixed = `${SAMPLES.latin} ${SAMPLES.chinese} 2024 ${SAMPLES.korean}`;
    expect(
      font
        .runs(mixed)
        .map((run) => run.text)
        .join(''),
    ).toBe(mixed);
    expect(faces(mixed)).toEqual([font.primary.family, 'Noto Sans SC', font.primary.family, 'Noto Sans KR']);
  });

  it('measures a line as the sum of its runs, each in its own face', () => {
    const font = captionFont('sans');
    const [latin, chinese] = [font.width('Hello ', 70), font.width(SAMPLES.chinese, 70)];
    expect(chinese).toBeGreaterThan(0);
    expect(font.width(`Hello ${SAMPLES.chinese}`, 70)).toBeCloseTo(latin + chinese, 6);
    expect(font.width(SAMPLES.chinese, 140)).toBeCloseTo(2 * chinese, 6);
  });

  it('keeps a Devanagari or Thai cluster whole in one run', () => {
    const font = captionFont('display');
    for (const text of ['क्षत्रिय', 'น้ำ', 'e\u0301', 'क\u200Dष']) expect(font.runs(text)).toHaveLength(1);
  });
});

describe('UNSUPPORTED_TEXT', () => {
  it.each(CAPTION_FAMILIES)('%s refuses scripts no font has, naming them and what is covered, never emoji', (family) => {
    for (const [text, named] of [
      ['launch 🚀 ሰላም', 'ሰ (U+1230)'],
      [`你好 🍜 𓀀`, '𓀀 (U+13000)'],
    ] as const) {
      const error = refusal(text, family);
      expect(error.code).toBe('UNSUPPORTED_TEXT');
      expect(error.statusCode).toBe(422);
      expect(error.field).toBe('text');
      expect(error.message).toContain(named);
      expect(error.message).not.toMatch(/🚀|🍜/u);
      expect(error.message).toMatch(/Chinese.*Japanese.*Korean.*Devanagari.*Thai/);
    }
  });

  it('does not count what libass never looks up (joiners, variation selectors, marks of direction)', () => {
    expect(() => assertDrawable('क\u200Dष a\u2060b \u200Fשלום ✓\uFE0F')).not.toThrow();
  });

  describe('over HTTP', () => {
    const t = useTestApp();
    it('answers 422 naming the Ethiopic, and draws CJK and emoji', async () => {
      const response = await t.app.inject({ method: 'POST', url: '/tts-video', payload: { text: '你好，世界 🚀 ሰላም', voice: 'espeak-ng:en-us' } });
      expect(response.statusCode, response.body).toBe(422);
      const { error } = response.json<ErrorBody>();
      expect(error).toMatchObject({ code: 'UNSUPPORTED_TEXT', field: 'text' });
      expect(error.message).toContain('ሰ (U+1230)');
      expect(error.message).not.toContain('🚀');
      expect(error.message).not.toContain('你');
    });
  });
});

describe('the ASS script', () => {
  const LATIN = 'Captions follow the voice word by word, and stay inside the safe area of every frame size.';
  // Left to right throughout: right-to-left lines are drawn run by run (video-rtl.test.ts).
  const MIXED = `Ça coûte 5 € — “déjà vu” Ελληνικά Привет ${INJECTIONS.join(' ')}`;

  /**
   * Dialogue text as voxreel wrote it before font families: escaped pieces, the lit one between colour tags (the
   * highlight #FFD23F given as #FAD746, which libass's BT.601 blending turns into #FFD23F's BT.709 values; colour.ts).
   */
  function dialogueBefore(lines: readonly CaptionPiece[][], lit: number): string {
    const [highlight, plain] = ['{\\1c&H0046D7FA&}', '{\\1c&H00FFFFFF&}'];
    return lines.map((line) => line.map((piece) => (piece.word === lit ? `${highlight}${escapeAssText(piece.text)}${plain}` : escapeAssText(piece.text))).join(' ')).join('\\N');
  }

  it.each([
    [LATIN, '16:9'],
    [LATIN, '9:16'],
    [MIXED, '1:1'],
  ] as const)('is what it was for text the default face draws (%#): DejaVu Sans Bold, no \\fn', (text, aspectRatio) => {
    const captions = layoutCaptions({ text, speech: toneSpeech(text), size: frameSize('1080p', aspectRatio), aspectRatio, fps: FPS });
    const script = assScript(captions);
    expect(script).toMatch(/^Style: Caption,DejaVu Sans,\d+,&H00FFFFFF,&H00FFFFFF,&H00000000,&H80000000,-1,/m);
    const events = script.split('\n').filter((line) => line.startsWith('Dialogue:'));
    expect(events).toHaveLength(captions.states.length);
    captions.states.forEach((state, index) => {
      expect(events[index]?.split(',').slice(9).join(',')).toBe(dialogueBefore(captions.cues[state.cue]?.lines ?? [], state.word));
    });
  });

  it.each(CAPTION_FAMILIES)('%s: the style names the face, each fallback run an explicit \\fn and back', (family) => {
    const font = captionFont(family);
    const text = `${SAMPLES.latin} ${SAMPLES.chinese} ${SAMPLES.hindi}`;
    const captions = layoutCaptions({ text, speech: toneSpeech(text), size: frameSize('1080p', '16:9'), aspectRatio: '16:9', fps: FPS, look: { family } });
    const script = assScript(captions);
    const bold = family === 'display' ? '\\b1' : '';
    // Each fallback face at the size that matches the family's capitals (font.ts fallbackScale), then back to 100 %.
    const scaled = (sample: string) => `\\fscx${font.runs(sample)[0]?.scale}\\fscy${font.runs(sample)[0]?.scale}`;
    const back = `{\\fn${font.primary.family}${family === 'display' ? '\\b0' : ''}\\fscx100\\fscy100}`;
    expect(script).toMatch(new RegExp(`^Style: Caption,${font.primary.family},\\d+,[^,]+,[^,]+,[^,]+,[^,]+,${family === 'display' ? 0 : -1},`, 'm'));
    const event = script.split('\n').find((line) => line.startsWith('Dialogue:')) ?? '';
    // Chinese is several words, each written as a run of its own (no space between them).
    const chinese = wordsOf(captions, text, SAMPLES.chinese).map((word) => captions.words[word]?.text ?? '');
    expect(chinese.length).toBeGreaterThan(1);
    expect(chinese.join('')).toBe(SAMPLES.chinese);
    expect(event).toContain(` ${chinese.map((word) => `{\\fnNoto Sans SC${bold}${scaled(word)}}${word}${back}`).join('')} `);
    expect(event).toContain(`{\\fnNoto Sans Devanagari${bold}${scaled(SAMPLES.hindi)}}${SAMPLES.hindi}${back}`);
    expect(event).toMatch(new RegExp(`(^|[,}])${SAMPLES.latin}`));
  });

  it('never lets the text name a font: user braces and backslashes stay escaped, the fonts folder ignores them', async () => {
    const text = '{\\fnNoto Sans KR}中文 \\fnAnton}';
    const captions = layoutCaptions({ text, speech: toneSpeech(text), size: frameSize('1080p', '16:9'), aspectRatio: '16:9', fps: FPS });
    const script = assScript(captions);
    const event = script.split('\n').find((line) => line.startsWith('Dialogue:')) ?? '';
    // Unescaped braces open and close only our own blocks: colour and the SC run.
    const blocks = event.match(/(?<!\\)\{[^}]*(?<!\\)\}/g) ?? [];
    const scale = captionFont().runs('中')[0]?.scale;
    expect(blocks.filter((block) => block.includes('\\fn'))).toEqual([`{\\fnNoto Sans SC\\fscx${scale}\\fscy${scale}}`, '{\\fnDejaVu Sans\\fscx100\\fscy100}']);
    await writeFile(path.join(work, 'user-fn.ass'), script);
    expect(readdirSync(fontsDirFor(path.join(work, 'user-fn.ass'))).sort()).toEqual(['DejaVuSans-Bold.ttf', 'NotoSansSC_700Bold.ttf']);
  });

  it('hands libass only the files the text needs', async () => {
    const files = async (name: string, text: string, family: CaptionFamily) => {
      const captions = layoutCaptions({ text, speech: toneSpeech(text), size: frameSize('720p', '16:9'), aspectRatio: '16:9', fps: FPS, look: { family } });
      const script = path.join(work, `${name}.ass`);
      await writeFile(script, assScript(captions));
      return readdirSync(fontsDirFor(script)).sort();
    };
    expect(await files('latin', 'Hello world', 'sans')).toEqual(['DejaVuSans-Bold.ttf']);
    expect(await files('thai-serif', `${SAMPLES.latin} ${SAMPLES.thai}`, 'serif')).toEqual(['NotoSansThai_700Bold.ttf', 'NotoSerif_700Bold.ttf']);
    expect(await files('cyrillic-display', 'Привет', 'display')).toEqual(['Anton_400Regular.ttf', 'DejaVuSans-Bold.ttf']);
  });
});

describe('rendered with real ffmpeg', () => {
  const families = new Map<CaptionFamily, Promise<Rendered>>();
  // Pauses longer than a cue's between the samples, so each sample is a cue of its own and each frame shows one script.
  const rendered = (family: CaptionFamily) => {
    let promise = families.get(family);
    if (!promise) {
      promise = render(SAMPLE_TEXT, family, { gapSeconds: 0.8 });
      families.set(family, promise);
    }
    return promise;
  };

  it.each(CAPTION_FAMILIES)('%s: every script draws, as wide as it was measured, inside the safe area', async (family) => {
    const { file, captions } = await rendered(family);
    const { width } = frameSize('720p', '9:16');
    const { box } = captions;
    const font = captionFont(family);
    for (const name of SAMPLE_NAMES) {
      const { frame, cue } = shownWord(captions, firstWordOf(captions, SAMPLE_TEXT, SAMPLES[name]));
      const lines = captions.cues[cue]?.lines ?? [];
      expect(lines.map(lineText), name).toEqual([SAMPLES[name]]);
      const drawn = captionPixels(await decodeFrame(file, frame, FPS), width);
      expect(drawn.count, name).toBeGreaterThan(300);
      const measured = font.width(lineText(lines[0] ?? []), box.fontSize);
      // The white fill (the outline is black): the advance less the side bearings of the first and last glyph.
      const inked = (drawn.box?.right ?? 0) - (drawn.box?.left ?? 0) + 1;
      expect(inked, `${name}: ${inked} px drawn, ${measured.toFixed(1)} measured`).toBeLessThanOrEqual(measured + 2);
      expect(inked, `${name}: ${inked} px drawn, ${measured.toFixed(1)} measured`).toBeGreaterThan(measured - 0.2 * box.fontSize);
      expect(drawn.box?.left).toBeGreaterThanOrEqual(box.marginLeft - box.outline - 2);
      expect(drawn.box?.right).toBeLessThanOrEqual(width - box.marginRight + box.outline + 2);
    }
  });

  it('draws a fallback script with the same face in every family (at each family’s capital height), and Latin with each family’s own', async () => {
    const all = await Promise.all(CAPTION_FAMILIES.map(rendered));
    const frames = async (name: Sample) =>
      Promise.all(all.map(async ({ file, captions }) => decodeFrame(file, frameOfWord(captions, firstWordOf(captions, SAMPLE_TEXT, SAMPLES[name])), FPS)));
    const { width } = frameSize('720p', '9:16');
    for (const name of ['chinese', 'korean', 'thai'] as const) {
      // The same face, scaled to each family's capitals: its drawn height over its scale is the same in every family.
      const heights = (await frames(name)).map((frame) => {
        const { box } = captionPixels(frame, width);
        return box ? box.bottom - box.top + 1 : 0;
      });
      const perScale = heights.map((height, index) => height / ((captionFont(CAPTION_FAMILIES[index]).runs(SAMPLES[name])[0]?.scale ?? 100) / 100));
      for (const value of perScale) expect(Math.abs(value / (perScale[0] as number) - 1), `${name}: ${heights.join(', ')} px`).toBeLessThan(0.06);
    }
    const latin = (await frames('latin')).map((frame) => frame.toString('base64'));
    expect(new Set(latin).size).toBe(3);
  });

  it('draws the same with no system font at all: libass uses only the fonts we hand it', async () => {
    // Display (a face that is not bold) with Cyrillic from DejaVu Sans Bold: a system DejaVu Sans would win a loose match.
    const text = `${SAMPLES.latin} Привет ${SAMPLES.chinese} ${SAMPLES.korean}`;
    const normal = await render(text, 'display');
    const isolated = await withoutSystemFonts(() => render(text, 'display', { tag: '-no-system-fonts' }));
    const hashes = (file: string) => frameHashes(file, { filter: `fps=${FPS}` });
    const chinese = firstWordOf(isolated.captions, text, SAMPLES.chinese);
    expect(captionPixels(await decodeFrame(isolated.file, frameOfWord(isolated.captions, chinese), FPS), 720).count).toBeGreaterThan(300);
    expect(await hashes(isolated.file)).toEqual(await hashes(normal.file));
  });

  it('draws Latin captions exactly as with the whole DejaVu folder before', async () => {
    const text = 'Captions follow the voice word by word.';
    const { width, height } = frameSize('720p', '16:9');
    const captions = layoutCaptions({ text, speech: toneSpeech(text), size: { width, height }, aspectRatio: '16:9', fps: FPS });
    const script = path.join(work, 'latin-before.ass');
    await writeFile(script, assScript(captions));
    const frame = async (captionsFilter: string) => {
      const { stdout } = await runFfmpeg([
        ...['-v', 'error', '-f', 'lavfi', '-i', `color=c=0x0F172A:s=${width}x${height}:r=${FPS}`],
        ...['-vf', `select=eq(n\\,${frameOfWord(captions, 2)}),format=rgb24,${captionsFilter}`, '-frames:v', '1', '-f', 'rawvideo', 'pipe:1'],
      ]);
      return stdout;
    };
    const now = await frame(PICTURE.captions(script));
    expect(captionPixels(now, width).count).toBeGreaterThan(300);
    expect(now.equals(await frame(`ass=filename=${filterValue(script)}:fontsdir=${filterValue(FONTS_DIR)}:shaping=complex`))).toBe(true);
  });

  it.each([
    ['Chinese', LONG_CHINESE],
    ['Thai', LONG_THAI],
  ])('fits a long %s text without spaces into the frame, cut into lines between words by measured width', async (_name, text) => {
    const { width } = frameSize('1080p', '9:16');
    const { file, captions } = await render(text, 'sans', { resolution: '1080p' });
    const { box } = captions;
    const font = captionFont('sans');
    expect(captions.words.length).toBeGreaterThan(10);
    expect(captions.cues.length).toBeGreaterThan(1);
    // Every word shown once, whole and in order, and together they are the text: nothing dropped, added or moved.
    const pieces = captions.cues.flatMap((cue) => cue.lines.flat());
    expect(pieces.map((piece) => piece.word)).toEqual(captions.words.map((_word, index) => index));
    expect(pieces.map((piece) => piece.text).join('')).toBe(text);
    for (const [index, cue] of captions.cues.entries()) {
      const lines = cue.lines.map(lineText);
      for (const line of lines) expect(font.width(line, box.fontSize), line).toBeLessThanOrEqual(box.maxLineWidth);
      const state = captions.states.find((candidate) => candidate.cue === index);
      if (!state) continue;
      const drawn = captionPixels(await decodeFrame(file, Math.floor((state.startFrame + state.endFrame) / 2), FPS), width);
      expect(drawn.count).toBeGreaterThan(1000);
      // The widest line's advance bounds the ink; a full-width comma or stop at the end inks only its left quarter.
      const measured = Math.max(...lines.map((line) => font.width(line, box.fontSize)));
      const unpunctuated = Math.max(...lines.map((line) => font.width(line.replace(/\p{P}+$/u, ''), box.fontSize)));
      const inked = (drawn.box?.right ?? 0) - (drawn.box?.left ?? 0) + 1;
      const said = `${lines.join(' / ')}: ${inked} px drawn, ${measured.toFixed(1)} measured (${unpunctuated.toFixed(1)} without the final marks)`;
      expect(inked, said).toBeLessThanOrEqual(measured + 2);
      expect(inked, said).toBeGreaterThan(unpunctuated - 0.2 * box.fontSize);
      expect(drawn.box?.left).toBeGreaterThanOrEqual(captions.box.marginLeft - captions.box.outline - 2);
      expect(drawn.box?.right).toBeLessThanOrEqual(width - captions.box.marginRight + captions.box.outline + 2);
    }
  });
});
