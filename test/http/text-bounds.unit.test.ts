import { describe, expect, it } from 'vitest';
import { sanitizeText } from '../../src/engines/mapped-text.js';
import { RequestBudget } from '../../src/speech/request-budget.js';
import { plainScript } from '../../src/speech/script.js';
import { MAX_SPANS, splitSentences } from '../../src/speech/sentences.js';

describe('what an engine is given', () => {
  it('cuts runs of punctuation and symbols to three, keeping every offset', () => {
    for (const run of ['.'.repeat(318), ','.repeat(368), ...'!?;:)*'.split('').map((mark) => mark.repeat(400)), '!?'.repeat(200), '. '.repeat(300)]) {
      const text = `Before ${run} after.`;
      const clean = sanitizeText(text);
      expect(clean).toHaveLength(text.length);
      expect(clean.replace(/[\p{L}\s]/gu, '').length).toBeLessThanOrEqual(3 + 1);
      expect(clean.startsWith('Before ')).toBe(true);
      expect(clean.endsWith(' after.')).toBe(true);
    }
    expect(sanitizeText('Wait... what?! (Really.)')).toBe('Wait... what?! (Really.)');
  });

  it('speaks a text of a thousand tiny sentences in about MAX_SPANS pieces, each a true slice of the text', () => {
    const text = 'A. '.repeat(1666);
    const spans = splitSentences(text);
    expect(spans.length).toBeLessThanOrEqual(MAX_SPANS);
    for (const span of spans) expect(text.slice(span.offset, span.offset + span.text.length)).toBe(span.text);
    // Ordinary prose keeps one sentence a piece.
    const prose = 'This sentence is an ordinary one, of ordinary length. '.repeat(60);
    expect(splitSentences(prose)).toHaveLength(60);
  });

  it('cuts a run with no space into pieces of at most 100 characters while more than a piece remains', () => {
    const spans = splitSentences('W'.repeat(5000));
    expect(spans.slice(0, -1).every((span) => span.text.length <= 100)).toBe(true);
    expect(spans.map((span) => span.text).join('')).toBe('W'.repeat(5000));
  });
});

/** A budget of `seconds` planned for a plain text of `characters` letters. */
function budgetOf(seconds: number, characters: number): RequestBudget {
  const budget = new RequestBudget({ seconds, secondsVariable: 'MAX_AUDIO_SECONDS', spokenCharacters: 40_000, scratchBytes: 0, minFreeDiskBytes: 0 });
  budget.plan(plainScript('W'.repeat(characters)));
  return budget;
}

describe('RequestBudget', () => {
  it('refuses past the limit', () => {
    const budget = budgetOf(100, 1000);
    budget.spend(60, 600);
    expect(() => budget.spend(50, 300)).toThrow(expect.objectContaining({ code: 'OUTPUT_TOO_LONG', statusCode: 422, field: 'text' }));
  });

  it('refuses early once a minute of speech shows the text will go far past the limit, and not before', () => {
    const budget = budgetOf(600, 5000);
    budget.spend(45, 100); // 2250 s at this pace, but too little spoken to judge
    expect(() => budget.spend(45, 100)).toThrow(expect.objectContaining({ code: 'OUTPUT_TOO_LONG' }));
  });

  it('lets an ordinary long text through', () => {
    const budget = budgetOf(600, 5000);
    for (let spoken = 0; spoken < 5000; spoken += 100) budget.spend(6.5, 100);
  });
});
