// A checked SSML tree (parse.ts) → the script the synthesizer speaks (../script.ts): the written text without the
// markup, and utterances cut at sentences, breaks and changes of prosody or language, each with what the engine is
// to say for the written words (a sub's alias, a say-as reading) mapped back to them.
import { MappedTextBuilder } from '../../engines/mapped-text.js';
import type { PhonemeSpan } from '../../engines/types.js';
import { GAP_SECONDS } from '../pcm.js';
import { splitSentences } from '../sentences.js';
import { appendAsWritten, type Script, type ScriptMark, type Utterance } from '../script.js';
import { invalidSsml, type SsmlElement, type SsmlNode } from './parse.js';
import { sayAs } from './say-as.js';

interface Style {
  rate: number;
  volumeDb: number;
  language: string | undefined;
  /** A voice other than the request's (<voice name>), by its id. */
  voice?: string;
}

/** A stretch of the written text [start, end), spoken as written or as `spoken` (whole: never cut inside). */
interface Run {
  kind: 'run';
  start: number;
  end: number;
  spoken?: string;
  style: Style;
}

type Item = Run | { kind: 'break'; seconds: number } | { kind: 'end-of-sentence' };

const RATES: Record<string, number> = { 'x-slow': 0.6, slow: 0.8, medium: 1, default: 1, fast: 1.25, 'x-fast': 1.6 };
const VOLUMES: Record<string, number> = { silent: -Infinity, 'x-soft': -12, soft: -6, medium: 0, default: 0, loud: 4, 'x-loud': 8 };
const STRENGTHS: Record<string, number> = { none: 0, 'x-weak': 0.1, weak: 0.25, medium: 0.4, strong: 0.75, 'x-strong': 1.2 };
/** Best effort, the same for every engine: a little slower and louder, or faster and softer. */
const EMPHASIS: Record<string, { rate: number; volumeDb: number }> = {
  strong: { rate: 0.85, volumeDb: 3 },
  moderate: { rate: 0.92, volumeDb: 1.5 },
  none: { rate: 1, volumeDb: 0 },
  reduced: { rate: 1.1, volumeDb: -4 },
};
const RATE_BOUNDS = [0.5, 2] as const;
const VOLUME_BOUNDS = [-40, 12] as const;
export const MAX_BREAK_SECONDS = 10;
/** Between words run together by prosody or language changes inside one sentence: a join, not a pause. */
const JOIN_SECONDS = 0.04;
/**
 * What cutting a sentence in two adds by itself (the engine lengthens the last word before the cut, and the next
 * part starts afresh): taken off a break inside a sentence, so that the break adds its own time. Measured with
 * eSpeak NG: 0.12 s.
 */
const CUT_SECONDS = 0.12;
/**
 * Between the turns of a dialogue (the voice changes at a sentence's end): the gap one speaker leaves before the
 * other answers, a little longer than one speaker's between sentences (GAP_SECONDS).
 */
export const TURN_SECONDS = 0.4;

/** Whether two stretches are in the same voice (ids are case-insensitive; none: the request's). */
function sameVoice(a: Pick<Style, 'voice'>, b: Pick<Style, 'voice'>): boolean {
  return (a.voice ?? '').toLowerCase() === (b.voice ?? '').toLowerCase();
}

class ScriptBuilder {
  written = '';
  readonly items: Item[] = [];
  readonly marks: ScriptMark[] = [];
  readonly phonemes: PhonemeSpan[] = [];

  /** Written text collapses white space as XML prose does; no space at the start or twice. */
  text(text: string, style: Style, spoken?: string): void {
    const collapsed = text.replace(/\s+/gu, ' ');
    const trimmed = this.written === '' || this.written.endsWith(' ') || this.written.endsWith('\n') ? collapsed.trimStart() : collapsed;
    if (!trimmed) return;
    const start = this.written.length;
    this.written += trimmed;
    this.items.push({ kind: 'run', start, end: this.written.length, style, ...(spoken === undefined ? {} : { spoken }) });
  }

  /** A sentence or paragraph ends: a separator in the written text, and an utterance ends. */
  endSentence(separator: ' ' | '\n'): void {
    if (this.written !== '' && !/\s$/u.test(this.written)) this.written += separator;
    else if (separator === '\n' && this.written.endsWith(' ')) this.written = `${this.written.slice(0, -1)}\n`;
    this.items.push({ kind: 'end-of-sentence' });
  }
}

/** The script of a checked SSML tree; throws 400 INVALID_SSML on attribute values it cannot read. */
export function ssmlScript(root: SsmlElement, field = 'text'): Script {
  const builder = new ScriptBuilder();
  walk(root, { rate: 1, volumeDb: 0, language: root.attributes.lang }, builder, field);
  const text = builder.written.trimEnd();
  const marks = builder.marks.map((mark) => ({ ...mark, offset: Math.min(mark.offset, text.length) }));
  return { text, utterances: utterancesOf(text, builder.items), marks, ...(builder.phonemes.length > 0 ? { phonemes: builder.phonemes } : {}) };
}

function walk(node: SsmlNode, style: Style, builder: ScriptBuilder, field: string): void {
  if (node.kind === 'text') {
    builder.text(node.text, style);
    return;
  }
  const { attributes } = node;
  const bad = (problem: string) => invalidSsml(node.line, node.column, `<${node.name}>: ${problem}`, field);
  const inner = (next: Style) => node.children.forEach((child) => walk(child, next, builder, field));
  switch (node.name) {
    case 'speak':
      inner(style);
      return;
    case 'p':
    case 's':
      builder.endSentence(' ');
      inner(attributes.lang ? { ...style, language: attributes.lang } : style);
      builder.endSentence(node.name === 'p' ? '\n' : ' ');
      return;
    case 'voice': {
      // A turn of a dialogue: a paragraph of its own, in the voice named.
      const name = attributes.name?.trim();
      if (!name) throw bad('name is required: the id of a voice (GET /voices)');
      builder.endSentence('\n');
      inner({ ...style, voice: name });
      builder.endSentence('\n');
      return;
    }
    case 'lang':
      if (!attributes.lang) throw bad('xml:lang is required');
      inner({ ...style, language: attributes.lang });
      return;
    case 'break':
      builder.items.push({ kind: 'break', seconds: breakSeconds(attributes, bad) });
      return;
    case 'mark':
      if (!attributes.name) throw bad('name is required');
      builder.marks.push({ name: attributes.name, offset: builder.written.length });
      return;
    case 'prosody':
      inner({ ...style, rate: bounded(style.rate * rateOf(attributes.rate, bad), RATE_BOUNDS), volumeDb: bounded(style.volumeDb + volumeOf(attributes.volume, bad), VOLUME_BOUNDS) });
      return;
    case 'emphasis': {
      const emphasis = EMPHASIS[attributes.level ?? 'moderate'];
      if (!emphasis) throw bad(`level must be one of ${Object.keys(EMPHASIS).join(', ')}`);
      inner({ ...style, rate: bounded(style.rate * emphasis.rate, RATE_BOUNDS), volumeDb: style.volumeDb + emphasis.volumeDb });
      return;
    }
    case 'sub':
      if (attributes.alias === undefined) throw bad('alias is required');
      builder.text(textOf(node, bad), style, attributes.alias);
      return;
    case 'say-as': {
      const reading = sayAs(textOf(node, bad), attributes['interpret-as'], attributes.format, bad);
      builder.text(reading.written, style, reading.spoken);
      return;
    }
    case 'phoneme':
      // Checked against the voice before anything is spoken (read-script.ts assertSpeakable).
      if (!attributes.ph) throw bad('ph is required');
      if ((attributes.alphabet ?? 'ipa') !== 'ipa') throw bad('only alphabet="ipa" is taken');
      {
        const start = builder.written.length;
        builder.text(textOf(node, bad), style);
        builder.phonemes.push({ start, end: builder.written.length, ipa: attributes.ph });
      }
      return;
    default:
      throw bad('not an element voxreel speaks');
  }
}

/** The text of an element that holds only text (sub, say-as, phoneme). */
function textOf(element: SsmlElement, bad: (problem: string) => Error): string {
  if (element.children.some((child) => child.kind === 'element')) throw bad('holds text only');
  return element.children.map((child) => (child.kind === 'text' ? child.text : '')).join('');
}

function breakSeconds(attributes: Record<string, string>, bad: (problem: string) => Error): number {
  if (attributes.time !== undefined) {
    const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s)\s*$/u.exec(attributes.time);
    if (!match) throw bad(`time "${attributes.time}" is not a time like "500ms" or "1.5s"`);
    const seconds = Number(match[1]) / (match[2] === 'ms' ? 1000 : 1);
    if (seconds > MAX_BREAK_SECONDS) throw bad(`time is at most ${MAX_BREAK_SECONDS}s`);
    return seconds;
  }
  const strength = STRENGTHS[attributes.strength ?? 'medium'];
  if (strength === undefined) throw bad(`strength must be one of ${Object.keys(STRENGTHS).join(', ')}`);
  return strength;
}

/** A rate keyword, a percentage ("150%", "+20%", "-10%": of the current rate or as a change) or a multiplier. */
function rateOf(value: string | undefined, bad: (problem: string) => Error): number {
  if (value === undefined) return 1;
  const named = RATES[value];
  if (named !== undefined) return named;
  const percent = /^\s*([+-]?)(\d+(?:\.\d+)?)%\s*$/u.exec(value);
  if (percent) return percent[1] ? 1 + (percent[1] === '-' ? -1 : 1) * (Number(percent[2]) / 100) : Number(percent[2]) / 100;
  const multiplier = Number(value);
  if (value.trim() !== '' && Number.isFinite(multiplier) && multiplier > 0) return multiplier;
  throw bad(`rate "${value}" is not x-slow, slow, medium, fast, x-fast, a percentage or a number`);
}

function volumeOf(value: string | undefined, bad: (problem: string) => Error): number {
  if (value === undefined) return 0;
  const named = VOLUMES[value];
  if (named !== undefined) return named;
  const decibels = /^\s*([+-]?\d+(?:\.\d+)?)\s*dB\s*$/u.exec(value);
  if (decibels) return Number(decibels[1]);
  throw bad(`volume "${value}" is not silent, x-soft, soft, medium, loud, x-loud or a change like "+6dB"`);
}

function bounded(value: number, [low, high]: readonly [number, number]): number {
  return Math.min(high, Math.max(low, value));
}

/**
 * Items → utterances: one ends at a sentence (sentences.ts, on the written text, never inside a run spoken whole),
 * at a break (the next starts after the break's silence) and where the prosody or the language changes.
 */
function utterancesOf(text: string, items: readonly Item[]): Utterance[] {
  const sentenceEnds = new Set(splitSentences(text).map((span) => span.offset + span.text.length));
  const utterances: Utterance[] = [];
  let current: { runs: Run[]; pauseBefore?: number } | undefined;
  /** Seconds of breaks since the last utterance; whether that one ended a sentence. */
  let breaks: number | undefined;
  let sentenceEnded = true;
  const close = (endsSentence: boolean) => {
    if (current && current.runs.length > 0) utterances.push(utteranceOf(text, current.runs, current.pauseBefore));
    if (current) sentenceEnded = endsSentence;
    current = undefined;
  };
  const open = (run: Run) => {
    const previous = current?.runs.at(-1);
    const sameStyle =
      previous && previous.style.rate === run.style.rate && previous.style.volumeDb === run.style.volumeDb && previous.style.language === run.style.language && sameVoice(previous.style, run.style);
    if (current && sameStyle) return current;
    if (current) close(false);
    // A break adds its time to the pause that stands there: between sentences the usual one (a turn's when the voice
    // changes), inside one none.
    const last = utterances.at(-1);
    const turn = last !== undefined && !sameVoice({ voice: last.voice }, run.style);
    const usual = !last ? 0 : sentenceEnded ? (turn ? TURN_SECONDS : GAP_SECONDS) : -CUT_SECONDS;
    const pauseBefore = breaks !== undefined ? Math.max(0, usual + breaks) : !sentenceEnded ? JOIN_SECONDS : turn ? TURN_SECONDS : undefined;
    current = { runs: [], ...(pauseBefore === undefined ? {} : { pauseBefore }) };
    breaks = undefined;
    return current;
  };
  for (const item of items) {
    if (item.kind === 'break') {
      close(false);
      breaks = (breaks ?? 0) + item.seconds;
    } else if (item.kind === 'end-of-sentence') {
      close(true);
      sentenceEnded = true;
    } else if (item.spoken !== undefined) {
      open(item).runs.push(item);
    } else {
      // Cut at the sentence ends that fall inside the run.
      let start = item.start;
      for (let end = item.start + 1; end <= item.end; end += 1) {
        if (end !== item.end && !sentenceEnds.has(end)) continue;
        open(item).runs.push({ ...item, start, end });
        if (sentenceEnds.has(end)) {
          close(true);
          sentenceEnded = true;
        }
        start = end;
      }
    }
  }
  close(true);
  return utterances.filter((utterance) => utterance.spoken.text.trim() !== '');
}

function utteranceOf(text: string, runs: readonly Run[], pauseBefore: number | undefined): Utterance {
  const builder = new MappedTextBuilder();
  for (const run of runs) {
    if (run.spoken === undefined) appendAsWritten(builder, text, run.start, Math.min(run.end, text.length));
    else builder.append(` ${run.spoken} `, run.start, run.end);
  }
  const start = (runs[0] as Run).start;
  const end = Math.min(text.length, (runs.at(-1) as Run).end);
  const { style } = runs[0] as Run;
  return {
    span: { text: text.slice(start, end), offset: start },
    spoken: builder.build(),
    rate: style.rate,
    volumeDb: style.volumeDb,
    ...(style.language ? { language: style.language } : {}),
    ...(style.voice ? { voice: style.voice } : {}),
    ...(pauseBefore !== undefined ? { pauseBefore } : {}),
  };
}
