// What an engine is given for the words an utterance says as written: a pronunciation lexicon's aliases first (the
// client's own choice), then English text normalization for English voices; each output unit still mapped to the
// written words it stands for, so word timings point at the text as sent. Words already given another reading
// (SSML sub and say-as) are left as they are.
import type { PhonemeSpan } from '../engines/types.js';
import type { Voice } from '../engines/voice.js';
import { MappedTextBuilder, type MappedText } from '../engines/mapped-text.js';
import { lexiconRewrites, type Lexicon, type Rewrite } from './lexicon.js';
import { normalizeEnglish } from './normalize-english.js';
import { appendAsWritten, type Script, type Utterance } from './script.js';

/** A rewrite of a stretch of written text, its output's source offsets relative to the stretch. */
type Rewriter = (text: string, writtenStart: number) => MappedText;

/**
 * The script as the voice is to say it: lexicons' aliases, then (English voices) numbers, dates and abbreviations read
 * out. `checkLength` is told the spoken length the aliases make before the text is built with them (it throws to refuse).
 */
export function speakable(script: Script, voices: Voice | ((utterance: Utterance) => Voice), lexicons: readonly Lexicon[] = [], checkLength?: (characters: number) => void): Script {
  // Each utterance in its own voice (a dialogue's turn) where it has one.
  const voiceOf = typeof voices === 'function' ? voices : () => voices;
  let utterances = script.utterances;
  const rewrites = lexicons.length > 0 ? lexiconRewrites(script.text, lexicons) : [];
  const aliases = rewrites.filter((rewrite) => rewrite.alias !== undefined);
  const spoken = utterances.reduce((sum, utterance) => sum + utterance.spoken.text.length, 0);
  checkLength?.(aliases.reduce((sum, { start, end, alias = '' }) => sum + alias.length - (end - start), spoken));
  if (aliases.length > 0) utterances = utterances.map((utterance) => rewriteAsWritten(utterance, (text, start) => withAliases(text, start, aliases)));
  utterances = utterances.map((utterance) => (/^en\b/iu.test(voiceOf(utterance).language) ? rewriteAsWritten(utterance, normalizeEnglish) : utterance));
  // IPA last, on what is finally spoken: the spoken units of each written span it covers (for voices that take it).
  const ipa = [...(script.phonemes ?? []), ...rewrites.flatMap(({ start, end, ipa: phonemes }) => (phonemes === undefined ? [] : [{ start, end, ipa: phonemes }]))];
  if (ipa.length > 0) utterances = utterances.map((utterance) => (voiceOf(utterance).phonemes ? withPhonemeSpans(utterance, ipa) : utterance));
  return utterances === script.utterances ? script : { ...script, utterances };
}

/** The utterance with the written spans to be said as IPA placed on its spoken text. */
function withPhonemeSpans(utterance: Utterance, written: readonly PhonemeSpan[]): Utterance {
  const { spoken } = utterance;
  const phonemes = written.flatMap(({ start, end, ipa }) => {
    let first = -1;
    let last = -1;
    for (let index = 0; index < spoken.text.length; index += 1) {
      const offset = spoken.sourceOffset(index) ?? -1;
      if (offset < start || offset >= end) continue;
      if (first === -1) first = index;
      last = index;
    }
    return first === -1 ? [] : [{ start: first, end: last + 1, ipa }];
  });
  return phonemes.length > 0 ? { ...utterance, phonemes } : utterance;
}

/** The utterance with each run of units said as written (each mapped to the one written unit it is) rewritten. */
function rewriteAsWritten(utterance: Utterance, rewrite: Rewriter): Utterance {
  const { spoken } = utterance;
  const builder = new MappedTextBuilder();
  const unit = (index: number) => spoken.sourceSpan(index, index + 1) ?? { offset: 0, length: 0 };
  let index = 0;
  while (index < spoken.text.length) {
    const first = unit(index);
    let end = index;
    while (end < spoken.text.length && unit(end).length === 1 && unit(end).offset === first.offset + (end - index)) end += 1;
    if (end === index) {
      builder.append(spoken.text[index] as string, first.offset, first.offset + first.length);
      index += 1;
      continue;
    }
    const rewritten = rewrite(spoken.text.slice(index, end), first.offset);
    for (let at = 0; at < rewritten.text.length; at += 1) {
      const source = rewritten.sourceSpan(at, at + 1) ?? { offset: 0, length: 0 };
      builder.append(rewritten.text[at] as string, first.offset + source.offset, first.offset + source.offset + source.length);
    }
    index = end;
  }
  return { ...utterance, spoken: builder.build() };
}

/** `text` (written from `writtenStart`) with each alias that lies wholly inside it said in place of its words. */
function withAliases(text: string, writtenStart: number, aliases: readonly Rewrite[]): MappedText {
  const builder = new MappedTextBuilder();
  let cursor = 0;
  for (const { start, end, alias } of aliases) {
    const from = start - writtenStart;
    const to = end - writtenStart;
    if (alias === undefined || from < cursor || to > text.length) continue;
    appendAsWritten(builder, text, cursor, from);
    builder.append(alias, from, to);
    cursor = to;
  }
  return appendAsWritten(builder, text, cursor, text.length).build();
}
