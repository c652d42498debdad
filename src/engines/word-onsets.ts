// Where a neural voice's words are heard. Piper (VITS) and Kokoro time a word from the durations their models predict
// for its phonemes, but the sound comes earlier than those frames: a word's onset is in the blank token (PAD) before
// its first phoneme for Piper, and Kokoro's audio runs some three frames ahead of its frames throughout. Measured
// against where Whisper base hears each word of the Rainbow Passage (ours minus Whisper's, median of about 95
// words), beside engines that time words from their own samples (starts: eSpeak NG +31..38 ms, RHVoice +19,
// Festival +43; ends +22..+51): Piper's joe started +86 ms from its phonemes' frames, +57 from the blank before
// (ends +65 either way); Kokoro's af_heart +117 ms (ends +88), three frames earlier +42 (ends +17): the lead
// hexgrad's own timestamps give a sentence's first word.
import type { SpokenWordSpan } from './piper/protocol.js';

/** How far ahead of its frames Kokoro's audio is heard: three frames of 600 samples (75 ms at 24 kHz). */
export const KOKORO_ONSET_FRAMES = 3;

/** Words in order, none starting before the word before it ends (an onset moved back into a word said run together with it). */
export function withoutOverlap(words: readonly SpokenWordSpan[]): SpokenWordSpan[] {
  let end = 0;
  return words.map((word) => {
    const start = Math.min(word.end, Math.max(word.start, end));
    end = Math.max(end, word.end);
    return start === word.start ? word : { ...word, start };
  });
}
