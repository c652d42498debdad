// A request's text → the script the synthesizer speaks: SSML when `text_type` says so (or, left out, when the text
// starts with <speak>), plain text otherwise.
import { AppError } from '../errors.js';
import type { Voice } from '../engines/voice.js';
import { markdownChapters } from './chapters.js';
import { plainScript, type Script } from './script.js';
import { looksLikeSsml, parseSsml } from './ssml/parse.js';
import { ssmlScript } from './ssml/script.js';

export type TextType = 'text' | 'ssml';

export function isSsml(text: string, textType: TextType | undefined): boolean {
  return textType === 'ssml' || (textType === undefined && looksLikeSsml(text));
}

/** The script of a request's text; 400 INVALID_SSML for SSML it cannot read, 422 UNSUPPORTED_TEXT for SSML without a word (naming `field`). */
export function readScript(text: string, textType?: TextType, field = 'text'): Script {
  if (!isSsml(text, textType)) return plainScript(text);
  const script = ssmlScript(parseSsml(text, field), field);
  if (!/\S/u.test(script.text)) {
    throw new AppError('UNSUPPORTED_TEXT', { field, message: 'The SSML has no text to speak: <speak> is empty or holds only markup (breaks, marks); add words inside it.' });
  }
  return script;
}

/** The written text of a request (SSML without its markup, Markdown headings without theirs): what captions show and billing counts. */
export function writtenText(text: string, textType?: TextType): string {
  return isSsml(text, textType) ? readScript(text, textType).text : (markdownChapters(text)?.text ?? text);
}

/** 422 UNSUPPORTED_SSML when the script asks of the voice what its engine cannot do. */
export function assertSpeakable(script: Script, voice: Voice, field = 'text'): void {
  if (script.phonemes && !voice.phonemes) {
    throw new AppError('UNSUPPORTED_SSML', {
      field,
      message: `<phoneme> is not taken by the ${voice.engine} engine (voice ${voice.id}; the voices with \`phonemes: true\` in GET /voices take IPA): write the word as it sounds, or use <sub alias="...">.`,
    });
  }
}
