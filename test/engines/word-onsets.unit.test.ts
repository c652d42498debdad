import { describe, expect, it } from 'vitest';
import { withoutOverlap } from '../../src/engines/word-onsets.js';

describe('words moved to where they are heard', () => {
  it('start no earlier than the word before ends, and never past their own end', () => {
    const words = [
      { textOffset: 0, start: 100, end: 900 },
      // Said run together with the one before ("from the"): its onset, moved into that word, comes back to its end.
      { textOffset: 5, start: 850, end: 1200 },
      { textOffset: 9, start: 1300, end: 1500 },
      // Wholly inside the words before (an engine's overlap): a zero-length word at its own end.
      { textOffset: 14, start: 1400, end: 1450 },
    ];
    expect(withoutOverlap(words).map((word) => [word.start, word.end])).toEqual([
      [100, 900],
      [900, 1200],
      [1300, 1500],
      [1450, 1450],
    ]);
    // Words that do not overlap are the same objects.
    expect(withoutOverlap(words)[0]).toBe(words[0]);
  });
});
