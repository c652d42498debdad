import { AppError } from '../../../errors.js';
import type { KokoroPhonemized } from '../phonemes/types.js';

/** Japanese text as misaki's `ja` phoneme set, for Kokoro's j* packs. */
export async function japanesePhonemes(text: string): Promise<KokoroPhonemized> {
  void text;
  throw new AppError('UNSUPPORTED_TEXT', { message: 'Kokoro does not read Japanese text yet: its Japanese reading is not installed in this build.' });
}
