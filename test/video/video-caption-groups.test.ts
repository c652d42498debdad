// Issue 38, the text side of captions: which words form a cue, group or line, and when. Points 4 (pop: spaces kept,
// one size per video, no cue under about 0.3 s, no group across a sentence end), 5 (phrases of Japanese, Chinese and
// Thai whole), 6 (no widows) and 7 (the title a hook). Layout data checked against the measuring font; one video
// made through the API with a real engine and ffmpeg for the claims about the picture.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TtsVideoResponse } from '../../src/api/video.js';
import type { Speech } from '../../src/speech/speech.js';
import { breakIntoCues, joinLine, MIN_CUE_SECONDS, type CaptionPiece } from '../../src/speech/captions/cues.js';
import { textTokens } from '../../src/speech/word-segments.js';
import { timedWords } from '../../src/speech/words.js';
import { STYLE_PRESETS, type CaptionLook } from '../../src/video/caption-style.js';
import type { Captions } from '../../src/video/captions.js';
import { captionFont } from '../../src/video/font.js';
import { frameSize } from '../../src/video/frame.js';
import { layoutCaptions } from '../../src/video/layout.js';
import type { AspectRatio } from '../../src/api/video-options.js';
import { renderVideo } from '../../src/video/render.js';
import { decodeFrame, ffmpeg, screenshot } from '../helpers/media.js';
import { useTestApp } from '../helpers/helpers.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { wordSpeech } from '../helpers/video-helpers.js';

const FPS = 30;
const STYLES = ['karaoke', 'bold', 'pop', 'subtitle'] as const;

/** A text per script, its voice's language, and words and phrases a reader takes as one (none may be cut). */
const SCRIPTS = {
  english: {
    language: 'en-US',
    text: 'Here are 3 editing tricks nobody tells you. First, cut on the beat of the music! Number two! Our third trick is the simplest of all: keep every video under a minute.',
    whole: [],
  },
  japanese: {
    language: 'ja',
    text: '今日は「ショート動画」のコツをちょっとだけ教えます。最後に、いいね👍とフォローをよろしくね🇯🇵。ハイパーラプスでテンポアップ🚀。',
    whole: ['「ショート動画」の', 'コツを', 'いいね', 'ハイパーラプスで', 'テンポアップ'],
  },
  chinese: { language: 'zh-CN', text: '每天早上，港口总是比城镇更早醒来。渔船驶过灯塔，游客们慢慢地走向海边。', whole: ['每天', '早上', '城镇', '醒来', '灯塔', '游客们', '海边'] },
  thai: { language: 'th', text: 'วันนี้เราจะทำวิดีโอสั้นให้สนุกขึ้น ดูวิดีโอนี้แล้วกดไลก์และติดตามช่องของเรา', whole: ['วิดีโอ', 'ไลก์', 'ติดตาม', 'แล้ว'] },
  korean: { language: 'ko', text: '둘째, 목소리를 고르세요. 셋째, 자막을 넣으세요.', whole: [] },
  russian: { language: 'ru', text: 'Во-вторых, выберите голос. В-третьих, добавьте субтитры к видео.', whole: [] },
  hindi: { language: 'hi', text: 'दूसरा, आवाज़ चुनें। तीसरा, वीडियो में उपशीर्षक जोड़ें।', whole: [] },
} as const;
type Script = keyof typeof SCRIPTS;

/** A Japanese line or group never starts with a particle (a word of its own: を, は, ね👍…): it goes with the word before it. */
const PARTICLE = /^[をはがにのとでもへねよかや][\p{P}\p{Extended_Pictographic}\p{Regional_Indicator}]*$/u;

function layout(script: Script, look: Partial<CaptionLook>, options: { speech?: Speech; aspectRatio?: AspectRatio; title?: string } = {}): Captions {
  const { text, language } = SCRIPTS[script];
  const aspectRatio = options.aspectRatio ?? '9:16';
  const speech = options.speech ?? wordSpeech(text);
  return layoutCaptions({ text, speech, size: frameSize('1080p', aspectRatio), aspectRatio, fps: FPS, look, language, ...(options.title ? { title: { text: options.title, seconds: 3 } } : {}) });
}

const lineText = (line: readonly CaptionPiece[]) => joinLine(line, (index) => (line[index] as CaptionPiece).text);
const cueLines = (captions: Captions) => captions.cues.map((cue) => cue.lines.map(lineText));

/** Each word's sentence, by the speech's sentences. */
function sentenceOf(captions: Captions, speech: Speech): number[] {
  return captions.words.map((word) => speech.sentences.findIndex((sentence) => word.offset >= sentence.textOffset && word.offset < sentence.textOffset + sentence.textLength));
}

describe('phrases kept whole (point 5)', () => {
  it('cuts Thai loanwords and Japanese katakana words nowhere, whatever the word segmenter does', () => {
    const words = (text: string) => textTokens(text).map((token) => token.text);
    expect(words('ดูวิดีโอนี้แล้วกดไลก์และติดตาม')).toEqual(['ดู', 'วิดีโอ', 'นี้', 'แล้ว', 'กด', 'ไลก์', 'และ', 'ติดตาม']);
    expect(words('ทำวิดีโอสั้น')).toContain('วิดีโอ');
    expect(words('ハイパーラプスでテンポアップ')).toEqual(['ハイパーラプス', 'で', 'テンポアップ']);
  });

  for (const script of ['japanese', 'chinese', 'thai'] as const) {
    it.each(STYLES)(`${script}, %s: every phrase on one line of one cue, no line or group starting with a particle`, (style) => {
      for (const aspectRatio of ['9:16', '16:9'] as const) {
        const captions = layout(script, { style }, { aspectRatio });
        const lines = cueLines(captions).flat();
        const shown = lines.join('|');
        for (const whole of SCRIPTS[script].whole) expect(shown, `${aspectRatio}: ${whole}`).toContain(whole);
        for (const line of captions.cues.flatMap((cue) => cue.lines)) expect(line[0]?.text, `${aspectRatio}: ${lineText(line)}`).not.toMatch(PARTICLE);
        expect(lines.join('').replace(/\s/gu, '')).toBe(SCRIPTS[script].text.replace(/\s/gu, ''));
      }
    });
  }
});

describe('groups and cues shared by every style (point 4)', () => {
  it.each(STYLES)('%s: no cue holds the end of one sentence and the start of the next ("two! Our")', (style) => {
    for (const script of Object.keys(SCRIPTS) as Script[]) {
      const speech = wordSpeech(SCRIPTS[script].text);
      const captions = layout(script, { style }, { speech });
      const sentences = sentenceOf(captions, speech);
      for (const cue of captions.cues) expect(new Set(cue.lines.flat().map((piece) => sentences[piece.word])).size, `${script}: ${cueLines({ ...captions, cues: [cue] })}`).toBe(1);
    }
  });

  it.each(STYLES.flatMap((style) => (['as-written', 'upper'] as const).map((textCase) => ({ style, textCase }))))(
    '$style, $textCase: no cue shown under 0.3 s unless it holds a whole sentence, even when words come fast',
    ({ style, textCase }) => {
      const speech = wordSpeech(SCRIPTS.english.text, { wordSeconds: 0.17, gapSeconds: 0.03, sentenceGapSeconds: 0.25 });
      const captions = layout('english', { style, textCase }, { speech });
      const sentences = sentenceOf(captions, speech);
      for (const cue of captions.cues) {
        const words = new Set(cue.lines.flat().map((piece) => piece.word));
        const wholeSentence = sentences.filter((sentence) => sentence === sentences[[...words][0] as number]).length === words.size;
        if (!wholeSentence) expect((cue.endFrame - cue.startFrame) / FPS, cueLines({ ...captions, cues: [cue] }).join(' / ')).toBeGreaterThanOrEqual(MIN_CUE_SECONDS - 1 / FPS);
      }
    },
  );

  it.each(['as-written', 'upper'] as const)('pop, %s: one size for the whole video, every group drawn at it (none shrunk on its own), one to three words', (textCase) => {
    const text = 'Incomprehensibilities abound, but subscribing takes one tap. Donaudampfschifffahrt is German.';
    const speech = wordSpeech(text);
    const captions = layoutCaptions({ text, speech, size: frameSize('1080p', '9:16'), aspectRatio: '9:16', fps: FPS, look: { style: 'pop', textCase } });
    const font = captionFont('sans');
    const { box } = captions;
    for (const cue of captions.cues) {
      expect(cue.lines).toHaveLength(1);
      expect(new Set(cue.lines.flat().map((piece) => piece.word)).size).toBeLessThanOrEqual(3);
      const shown = textCase === 'upper' ? lineText(cue.lines[0] ?? []).toUpperCase() : lineText(cue.lines[0] ?? []);
      // What fits maxLineWidth is drawn at the video's size, its lit word included (ass.ts shrinks only wider lines).
      expect(font.width(shown, box.fontSize), shown).toBeLessThanOrEqual(box.maxLineWidth);
    }
    // Still a big style: at least half its own size.
    const own = layoutCaptions({ text: 'Hi', speech: wordSpeech('Hi'), size: frameSize('1080p', '9:16'), aspectRatio: '9:16', fps: FPS, look: { style: 'pop' } });
    expect(box.fontSize).toBeGreaterThanOrEqual(own.box.fontSize * 0.5 - 1);
  });

  it.each(['korean', 'russian', 'hindi'] as const)('pop, %s: the spaces of a group stay, also inside a word the engine timed as one', (script) => {
    const { text } = SCRIPTS[script];
    const speech = wordSpeech(text);
    // The engine said nothing of the second word: it joins the first, "둘째, 목소리를", one timed word with a space inside.
    speech.words.splice(1, 1);
    for (const scale of [1, 0.6]) {
      const captions = layout(script, { style: 'pop', scale }, { speech });
      expect(captions.words[0]?.text).toContain(' ');
      const shown = cueLines(captions).flat();
      expect(shown.join(' ')).toBe(text.replace(/\s+/gu, ' '));
    }
  });
});

describe('no widows (point 6)', () => {
  it.each(['karaoke', 'subtitle', 'bold', 'pop'] as const)('%s: a sentence spread over several cues shares its words evenly, never one word alone', (style) => {
    for (const aspectRatio of ['9:16', '16:9', '1:1'] as const) {
      for (const script of ['english', 'russian', 'chinese'] as const) {
        const speech = wordSpeech(SCRIPTS[script].text);
        const captions = layout(script, { style }, { speech, aspectRatio });
        const sentences = sentenceOf(captions, speech);
        const bySentence = new Map<number, string[]>();
        for (const cue of captions.cues) {
          const sentence = sentences[cue.lines[0]?.[0]?.word ?? 0] as number;
          bySentence.set(sentence, [...(bySentence.get(sentence) ?? []), cue.lines.map(lineText).join(' ')]);
        }
        for (const cues of bySentence.values()) {
          if (cues.length < 2) continue;
          const lengths = cues.map((cue) => [...cue].length);
          expect(Math.max(...lengths) / Math.min(...lengths), `${aspectRatio} ${script}: ${cues.join(' | ')}`).toBeLessThanOrEqual(style === 'karaoke' || style === 'subtitle' ? 2 : 3);
          if (style === 'karaoke' || style === 'subtitle') for (const cue of cues) expect(cue, `${aspectRatio} ${script}: ${cues.join(' | ')}`).toMatch(/\S\s+\S|^[^\s]{4,}$/u);
        }
      }
    }
  });

  it('karaoke at 9:16: the last word of a sentence is never a cue of its own (the frames of evidence 11)', () => {
    const text = 'This is the first sentence. And here is sentence two!';
    for (const scale of [1, 1.3, 1.6, 2]) {
      const captions = layoutCaptions({ text, speech: wordSpeech(text), size: frameSize('1080p', '9:16'), aspectRatio: '9:16', fps: FPS, look: { scale } });
      for (const lines of cueLines(captions)) expect(lines.join(' '), `scale ${scale}`).toMatch(/\s/u);
    }
  });

  it('balances a cue\'s two lines', () => {
    const words = timedWords('The harbour wakes before the town does, and the fishing boats slide out.', wordSpeech('The harbour wakes before the town does, and the fishing boats slide out.'));
    const [cue] = breakIntoCues(words, (line) => line.length <= 42);
    const lengths = cue?.lines.map((line) => lineText(line).length) ?? [];
    expect(lengths).toHaveLength(2);
    expect(Math.abs((lengths[0] ?? 0) - (lengths[1] ?? 0))).toBeLessThanOrEqual(8);
  });
});

describe('the title, a hook (point 7)', () => {
  const font = captionFont('sans');
  const titled = (style: (typeof STYLES)[number], title: string, aspectRatio: AspectRatio = '9:16', textCase: 'as-written' | 'upper' = 'upper') =>
    layout('english', { style, textCase }, { aspectRatio, title });

  it.each(STYLES.flatMap((style) => (['9:16', '16:9', '4:5'] as const).map((aspectRatio) => ({ style, aspectRatio }))))(
    '$style, $aspectRatio: the largest text on screen, in balanced lines inside the safe area, above the captions',
    ({ style, aspectRatio }) => {
      const captions = titled(style, '3 editing tricks nobody tells you 🔥', aspectRatio);
      const title = captions.title!;
      const { box } = captions;
      expect(title.fontSize, `captions ${box.fontSize}`).toBeGreaterThanOrEqual(box.fontSize * (STYLE_PRESETS[style].litScale / 100) * 1.1);
      expect(title.lines.length).toBeLessThanOrEqual(3);
      const widths = title.lines.map((line) => font.width(line.toUpperCase(), title.fontSize));
      expect(Math.max(...widths) + title.fontSize / 6).toBeLessThanOrEqual(box.width - box.marginLeft - box.marginRight);
      if (title.lines.length > 1) expect(Math.max(...widths) / Math.min(...widths), title.lines.join(' / ')).toBeLessThan(1.7);
      for (const line of title.lines) expect(line, 'an emoji stays with its word').toMatch(/\p{L}|\p{N}/u);
      if (captions.look.position !== 'top') expect(title.top + title.lines.length * title.fontSize).toBeLessThan(box.height - box.marginBottom - box.textHeight);
    },
  );

  it('keeps an emoji with its word in the feed\'s title ("Edit faster in 2026 🚀"), and a title of an emoji alone', () => {
    const captions = titled('karaoke', 'Edit faster in 2026 🚀', '4:5', 'as-written');
    expect(captions.title?.lines.at(-1)).toMatch(/\S+ 🚀$/u);
    expect(titled('pop', '🚀').title?.lines).toEqual(['🚀']);
  });

  it('breaks a Japanese title between phrases', () => {
    const captions = layout('japanese', { style: 'pop' }, { title: '「ショート動画」のコツをちょっとだけ教えます' });
    for (const line of captions.title?.lines ?? []) expect(line).not.toMatch(/^[をはがにのとでもへ]/u);
    expect(captions.title?.lines.join('|')).toContain('「ショート動画」の');
  });
});

describe('made through the API with a real engine (points 4 and 7)', () => {
  const t = useTestApp();
  const dir = useTempDir('voxreel-caption-groups-');

  it('pop in capitals with a title: the title is the largest text in the first seconds, and no cue of a sentence flashes by', async () => {
    const text = 'Here are three editing tricks nobody tells you. First, cut on the beat! Number two! Keep every video under a minute.';
    const response = await t.app.inject({
      method: 'POST',
      url: '/tts-video',
      payload: { text, voice: 'espeak-ng:en-us', caption_style: 'pop', caption_case: 'upper', platform: 'tiktok', resolution: '720p', title: '3 editing tricks nobody tells you 🔥', title_seconds: 2.5 },
    });
    expect(response.statusCode, response.body).toBe(200);
    const video = response.json<TtsVideoResponse>();
    const file = path.join(t.outputDir, 'video', path.basename(video.url));
    // Rows of caption-coloured ink (white or the highlight) in the title's band and the captions' band.
    const frame = await decodeFrame(file, 30, FPS);
    const inkRows = (from: number, to: number) => {
      const rows: number[] = [];
      for (let y = from; y < to; y++) {
        let ink = 0;
        for (let x = 0; x < video.width; x++) {
          const at = (y * video.width + x) * 3;
          if ((frame[at] as number) > 200 && (frame[at + 1] as number) > 180) ink += 1;
        }
        if (ink > 2) rows.push(y);
      }
      return rows;
    };
    /** The tallest run of consecutive inked rows: one line's letters. */
    const tallest = (rows: number[]) => {
      let [best, run] = [0, 0];
      rows.forEach((row, index) => {
        run = index > 0 && row === (rows[index - 1] as number) + 1 ? run + 1 : 1;
        best = Math.max(best, run);
      });
      return best;
    };
    const title = tallest(inkRows(0, Math.round(video.height * 0.4)));
    const caption = tallest(inkRows(Math.round(video.height * 0.4), video.height));
    expect(caption).toBeGreaterThan(10);
    expect(title, `title ${title} px high, captions ${caption} px`).toBeGreaterThan(caption);
    await screenshot('captions', 'api-english-pop-title', file, 30);
    // The WebVTT file holds the video's cues: none shorter than about 0.3 s but a sentence said as fast ("Number two!").
    const vtt = (await t.fetchFile(video.captionsUrl)).body.toString('utf8');
    const seconds = (stamp: string) => stamp.split(':').reduce((sum, part) => sum * 60 + Number(part), 0);
    const cues = [...vtt.matchAll(/(\S+) --> (\S+)\n(.+)/gu)].map((match) => ({ shows: seconds(match[2] as string) - seconds(match[1] as string), text: (match[3] as string).replace(/<[^>]+>/gu, '') }));
    expect(cues.length).toBeGreaterThan(4);
    for (const cue of cues) if (!/^Number two!$/u.test(cue.text)) expect(cue.shows, cue.text).toBeGreaterThanOrEqual(MIN_CUE_SECONDS - 1 / FPS);
    expect(cues.map((cue) => cue.text)).not.toContainEqual(expect.stringMatching(/[.!?] \S/u));
  }, 60_000);

  it.each(Object.keys(SCRIPTS) as Script[])('%s in pop and karaoke: a screenshot per style in test-results/captions/', async (script) => {
    const { text, language } = SCRIPTS[script];
    const speech = wordSpeech(text);
    const size = frameSize('720p', '9:16');
    for (const style of ['pop', 'karaoke'] as const) {
      const captions = layoutCaptions({ text, speech, size, aspectRatio: '9:16', fps: FPS, look: { style }, language, title: { text: script === 'japanese' ? '「ショート動画」のコツ🔥' : '3 tricks nobody tells you 🔥', seconds: 1 } });
      const output = path.join(dir, `${script}-${style}.mp4`);
      await renderVideo(ffmpeg, { speech, size, fps: FPS, frameRate: 'constant', captions, output });
      const state = captions.states[Math.floor(captions.states.length / 2)];
      await screenshot('captions', `${script}-${style}`, output, state?.startFrame ?? 0);
      await screenshot('captions', `${script}-${style}-title`, output, 10);
    }
  }, 60_000);
});
