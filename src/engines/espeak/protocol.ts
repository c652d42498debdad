/** Jobs and results between EspeakEngine and espeak-host.ts. */

export type EspeakJob = { kind: 'describe' } | { kind: 'synthesize'; voice: string; ssml: string } | { kind: 'phoneme-table'; voice: string };

export interface EspeakVoiceInfo {
  /** e.g. `gmw/en-US`, what set_voice() takes. */
  identifier: string;
  name: string;
  /** eSpeak's lowercase language codes, preferred first. */
  languages: string[];
}

export interface EspeakVariantInfo {
  /** File name under voices/!v, what goes after `+`. */
  file: string;
  name: string;
  gender: 'female' | 'male' | null;
}

export interface EspeakEvent {
  type: 'word' | 'phoneme' | 'end';
  /** 1-based code point index into the SSML text. */
  textPosition: number;
  audioMs: number;
  /** For phonemes: a silence rather than a sound. */
  pause: boolean;
}

/** What eSpeak NG has: its voices, its variants and its sample rate. */
export interface EspeakDescription {
  sampleRate: number;
  voices: EspeakVoiceInfo[];
  variants: EspeakVariantInfo[];
}

export type EspeakResult =
  | ({ kind: 'description' } & EspeakDescription)
  /** The voice's IPA → mnemonic pairs (ipa.ts). */
  | { kind: 'phoneme-table'; entries: Array<[string, string]> }
  | { kind: 'speech'; samples: Int16Array; sampleRate: number; events: EspeakEvent[] };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isEvent(value: unknown): value is EspeakEvent {
  return (
    isRecord(value) &&
    (value.type === 'word' || value.type === 'phoneme' || value.type === 'end') &&
    typeof value.textPosition === 'number' &&
    typeof value.audioMs === 'number' &&
    typeof value.pause === 'boolean'
  );
}

function isVoiceInfo(value: unknown): value is EspeakVoiceInfo {
  return (
    isRecord(value) &&
    typeof value.identifier === 'string' &&
    typeof value.name === 'string' &&
    Array.isArray(value.languages) &&
    value.languages.every((language) => typeof language === 'string')
  );
}

function isVariantInfo(value: unknown): value is EspeakVariantInfo {
  return (
    isRecord(value) &&
    typeof value.file === 'string' &&
    typeof value.name === 'string' &&
    (value.gender === 'female' || value.gender === 'male' || value.gender === null)
  );
}

export function isEspeakResult(value: unknown): value is EspeakResult {
  if (!isRecord(value)) return false;
  if (value.kind === 'phoneme-table') {
    return Array.isArray(value.entries) && value.entries.every((entry) => Array.isArray(entry) && entry.length === 2 && entry.every((part) => typeof part === 'string'));
  }
  if (value.kind === 'description') {
    return (
      typeof value.sampleRate === 'number' &&
      Array.isArray(value.voices) && value.voices.every(isVoiceInfo) && Array.isArray(value.variants) &&
      value.variants.every(isVariantInfo)
    );
  }
  return (
    value.kind === 'speech' &&
    value.samples instanceof Int16Array &&
    typeof value.sampleRate === 'number' &&
    value.sampleRate > 0 &&
    Array.isArray(value.events) &&
    value.events.every(isEvent)
  );
}
