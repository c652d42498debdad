import { describe, expect, it } from 'vitest';
import { alignmentBetween, characterAlignment } from '../../src/speech/character-alignment.js';

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

  it('gives a stream chunk the characters that start within it', () => {
    const alignment = characterAlignment('ab cd', [
      { offset: 0, length: 2, start: 0, end: 1 },
      { offset: 3, length: 2, start: 1.5, end: 2.5 },
    ]);
    expect(alignmentBetween(alignment, 0, 1).characters).toEqual(['a', 'b']);
    expect(alignmentBetween(alignment, 1, Infinity).characters).toEqual([' ', 'c', 'd']);
  });
});
