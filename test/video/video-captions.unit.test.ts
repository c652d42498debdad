import { describe, expect, it } from 'vitest';
import { assScript, escapeAssText } from '../../src/video/ass.js';
import { frameSize } from '../../src/video/frame.js';
import { layoutCaptions } from '../../src/video/layout.js';
import { escapeVttText } from '../../src/speech/captions/cues.js';
import { webVtt } from '../../src/video/webvtt.js';
import { INJECTIONS, toneSpeech } from '../helpers/video-helpers.js';


/** What libass draws for dialogue text (its get_next_char and override-block rules), and how many blocks it reads. */
function libassReading(text: string): { visible: string; overrideBlocks: number } {
  let visible = '';
  let overrideBlocks = 0;
  for (let i = 0; i < text.length; ) {
    const char = text[i] as string;
    const next = text[i + 1];
    if (char === '{') {
      overrideBlocks += 1;
      const close = text.indexOf('}', i);
      i = close < 0 ? text.length : close + 1;
    } else if (char === '\\' && (next === 'N' || next === 'n' || next === 'h' || next === '{' || next === '}')) {
      visible += next === 'N' || next === 'n' ? '\n' : next === 'h' ? '\u00a0' : next;
      i += 2;
    } else {
      visible += char;
      i += 1;
    }
  }
  return { visible: visible.replaceAll('\u2060', ''), overrideBlocks };
}

function unescapeVtt(text: string): string {
  return text.replace(/<\d\d:\d\d:\d\d\.\d{3}>/g, '').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

describe('ASS escaping', () => {
  it.each(INJECTIONS)('draws %s literally, with no override block', (text) => {
    const escaped = escapeAssText(text);
    expect(libassReading(escaped)).toEqual({ visible: text, overrideBlocks: 0 });
    // Our own highlight tags right after the text stay tags.
    expect(libassReading(`${escaped}{\\1c&H00FF00&}x`)).toEqual({ visible: `${text}x`, overrideBlocks: 1 });
  });

  it('keeps every event on one line of the script, whatever the text', () => {
    const text = `${INJECTIONS.join(' ')}\nDialogue: 0,0:00:00.00,9:00:00.00,Caption,,0,0,0,,owned\r\n[Events]`;
    const captions = layoutCaptions({ text, speech: toneSpeech(text), size: frameSize('720p', '16:9'), aspectRatio: '16:9', fps: 30 });
    const script = assScript(captions);
    const events = script.split('\n').filter((line) => line.startsWith('Dialogue:'));
    expect(events).toHaveLength(captions.states.length);
    expect(script.split('\n').filter((line) => line === '[Events]')).toHaveLength(1);
    captions.states.forEach((state, index) => {
      const body = (events[index] ?? '').split(',').slice(9).join(',');
      const lines = captions.cues[state.cue]?.lines ?? [];
      const lit = lines.flat().filter((piece) => piece.word === state.word).length;
      // Our two colour tags around each lit piece, none from the text, and the text drawn as given.
      expect(libassReading(body)).toEqual({
        visible: lines.map((line) => line.map((piece) => piece.text).join(' ')).join('\n'),
        overrideBlocks: 2 * lit,
      });
    });
  });
});

describe('WebVTT', () => {
  it.each(INJECTIONS)('escapes %s so it reads back the same', (text) => {
    const escaped = escapeVttText(text);
    expect(escaped).not.toMatch(/[<>]/);
    expect(unescapeVtt(escaped)).toBe(text);
  });

  it('holds the same cues as the picture, with rising word timestamps, and the text literally', () => {
    const text = `Hello there. ${INJECTIONS.join(' ')}\nLast line.`;
    // Landscape 1080p: every injection string fits on a line, so none is cut.
    const captions = layoutCaptions({ text, speech: toneSpeech(text), size: frameSize('1080p', '16:9'), aspectRatio: '16:9', fps: 30 });
    const vtt = webVtt(captions);
    const [header, ...blocks] = vtt.trim().split('\n\n');
    expect(header).toBe('WEBVTT');
    expect(blocks).toHaveLength(captions.cues.length);
    const seconds = (stamp: string) => stamp.split(':').reduce((sum, part) => sum * 60 + Number(part), 0);
    let previousEnd = 0;
    const words: string[] = [];
    blocks.forEach((block, index) => {
      const [timing, ...lines] = block.split('\n');
      const [start, end] = (timing ?? '').split(' --> ').map(seconds) as [number, number];
      expect(start).toBeGreaterThanOrEqual(previousEnd);
      expect(end).toBeGreaterThan(start);
      expect(start).toBeCloseTo((captions.cues[index]?.startFrame ?? 0) / 30, 3);
      previousEnd = end;
      expect(lines.map(unescapeVtt)).toEqual(captions.cues[index]?.lines.map((line) => line.map((piece) => piece.text).join(' ')));
      const stamps = lines.join(' ').match(/<(\d\d:\d\d:\d\d\.\d{3})>/g)?.map((tag) => seconds(tag.slice(1, -1))) ?? [];
      stamps.forEach((stamp, position) => {
        expect(stamp).toBeGreaterThan(position === 0 ? start : (stamps[position - 1] as number));
        expect(stamp).toBeLessThan(end);
      });
      words.push(...lines.map(unescapeVtt).join(' ').split(' '));
    });
    expect(words.join(' ')).toBe(text.replace(/\s+/g, ' '));
  });
});
