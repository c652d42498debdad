import { AppError } from '../errors.js';

/** Speech made before the budget trusts its projection: early sentences say little about a whole text. */
const PROJECT_AFTER_SECONDS = 60;
/** How far past the limit a projection must reach to refuse: ordinary texts vary less than that along their length. */
const PROJECTION_MARGIN = 1.5;

/**
 * The most speech one request may make, enforced as it is made: the text stops at the limit, not after it is all
 * spoken; and once a minute of it exists, a text whose pace so far would take it half as far again past the limit
 * stops then (a text of 5000 letters `W` is minutes of spelling, and a slow engine would spend the whole deadline
 * making audio only to refuse it).
 */
export class OutputBudget {
  private seconds = 0;
  private characters = 0;

  constructor(
    private readonly maxSeconds: number,
    private readonly totalCharacters: number,
  ) {}

  /** Counts a spoken piece; throws OUTPUT_TOO_LONG when the text has made, or is set to make, too much speech. */
  spend(seconds: number, characters: number): void {
    this.seconds += seconds;
    this.characters += characters;
    const projected = (this.seconds * this.totalCharacters) / Math.max(1, this.characters);
    const overLimit = this.seconds > this.maxSeconds;
    const overProjected = this.seconds >= Math.min(PROJECT_AFTER_SECONDS, this.maxSeconds / 2) && projected > this.maxSeconds * PROJECTION_MARGIN;
    if (overLimit || overProjected) {
      throw new AppError('OUTPUT_TOO_LONG', {
        field: 'text',
        message:
          `The text makes more than ${Math.round(this.maxSeconds)} seconds of speech (about ${Math.round(projected)} s at its pace so far), ` +
          'the most one request may make; split it into several requests.',
      });
    }
  }
}
