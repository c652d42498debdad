import { describe, expect, it } from 'vitest';
import { characterAlignment, StreamedAlignment } from '../../src/http/elevenlabs-alignment.js';

describe('characterAlignment', () => {
  it("spreads each word's time over its characters and the gaps over the characters between words", () => {
    const text = ' Hi, you.';
    const words = [
      { offset: 1, length: 2, start: 0.2, end: 0.4 },
      { offset: 5, length: 3, start: 0.6, end: 0.9 },
    ];
    const alignment = characterAlignment(text, words);
    expect(alignment.characters).toEqual([...text]);
    // ' ' before the first word at its start; 'H','i' share 0.2–0.4; ',',' ' share the gap 0.4–0.6; 'y','o','u' 0.6–0.9; '.' at the end.
    expect(alignment.character_start_times_seconds).toEqual([0.2, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]);
    expect(alignment.character_end_times_seconds).toEqual([0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.9]);
  });

  it('counts code points, not UTF-16 units, and never goes back where words overlap', () => {
    const text = '𝄞 la';
    const alignment = characterAlignment(text, [
      { offset: 0, length: 2, start: 0, end: 0.5 },
      { offset: 3, length: 2, start: 0.3, end: 0.7 },
    ]);
    expect(alignment.characters).toEqual(['𝄞', ' ', 'l', 'a']);
    const starts = alignment.character_start_times_seconds;
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    expect(alignment.character_end_times_seconds.at(-1)).toBe(0.7);
  });

  it('hands a stream its characters once each as the words come, with the times the whole text gives them', () => {
    const text = 'ab cd. ef!';
    const words = [
      { offset: 0, length: 2, start: 0, end: 1 },
      { offset: 3, length: 2, start: 1.5, end: 2.5 },
      { offset: 7, length: 2, start: 3, end: 3.5 },
    ];
    const streamed = new StreamedAlignment();
    streamed.add(words.slice(0, 2), text);
    const first = streamed.take();
    expect(first.characters).toEqual(['a', 'b', ' ', 'c', 'd']);
    expect(streamed.take().characters).toEqual([]);
    streamed.add(words.slice(2), text);
    const second = streamed.take();
    const last = streamed.take(true);
    expect([...first.characters, ...second.characters, ...last.characters].join('')).toBe(text);
    const whole = characterAlignment(text, words);
    expect([...first.character_start_times_seconds, ...second.character_start_times_seconds, ...last.character_start_times_seconds]).toEqual(whole.character_start_times_seconds);
    expect(last.characters).toEqual(['!']);
  });
});
