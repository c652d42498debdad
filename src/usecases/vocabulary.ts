// The domain's words the front doors speak in, from the modules that own them: what a front door hands a use case
// and reads back (a voice, an encoding, a word's times, a stored lexicon, where a dialogue's turns are), so that no front door reaches below the
// use cases for them.
export type { Voice } from '../engines/voice.js';
export { AUDIO_ENCODINGS, type AudioEncoding } from '../speech/audio-encoding.js';
/** Where a dialogue's turns are in its text as read (ElevenLabs' voice segments). */
export { segmentSpans } from '../speech/dialogue.js';
export { LEXICON_LIMITS } from '../speech/lexicon.js';
export type { StoredLexicon } from '../speech/lexicon-store.js';
export type { TextType } from '../speech/read-script.js';
export type { SpokenWord } from '../speech/words.js';
