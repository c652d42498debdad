import { preferredTag } from '../language-tags.js';
import type { Voice } from '../voice.js';
import type { EspeakVariantInfo, EspeakVoiceInfo } from './protocol.js';

export const ESPEAK_ENGINE = 'espeak-ng';
/** Listed next to each language's default (male) voice. */
export const FEMALE_VARIANT = 'f3';

export interface EspeakVariant {
  /** What goes after `+` in a voice id: eSpeak's variant file name, lowercase, spaces as `_`. */
  id: string;
  /** eSpeak's own name for it. */
  name: string;
  gender: 'female' | 'male' | null;
}

/** A voice id resolved to what eSpeak needs. */
export interface EspeakVoiceChoice {
  voice: Voice;
  /** What set_voice() takes, e.g. `gmw/en-US+f3`. */
  espeakName: string;
}

// eSpeak language codes that are not BCP-47 language subtags.
const LANGUAGE_ALIASES: Record<string, string> = { piqd: 'tlh-Piqd' };

/**
 * eSpeak writes language tags in lowercase and in its own order (`chr-us-qaaa-x-west`); BCP-47 wants
 * `en-GB-scotland`, `cmn-Latn-pinyin`, `es-419`, `chr-Qaaa-US-x-west`.
 */
export function toBcp47(code: string): string {
  const [main = '', ...privateUse] = code.toLowerCase().split('-x-');
  const [language = '', ...subtags] = main.split('-');
  const scripts: string[] = [];
  const regions: string[] = [];
  const variants: string[] = [];
  for (const subtag of subtags) {
    if (/^[a-z]{4}$/.test(subtag)) scripts.push(subtag.charAt(0).toUpperCase() + subtag.slice(1));
    else if (/^([a-z]{2}|\d{3})$/.test(subtag)) regions.push(subtag.toUpperCase());
    else variants.push(subtag);
  }
  const tag = [LANGUAGE_ALIASES[language] ?? language, ...scripts, ...regions, ...variants].join('-');
  return privateUse.length > 0 ? `${tag}-x-${privateUse.join('-x-')}` : tag;
}

export function toVariantId(file: string): string {
  return file.toLowerCase().replace(/\s+/g, '_');
}

interface BaseVoice {
  key: string;
  identifier: string;
  name: string;
  language: string;
}

/** The voices eSpeak NG reported, with lookups for `espeak-ng:<voice>[+<variant>]` ids. */
export class EspeakVoiceCatalog {
  private readonly bases = new Map<string, BaseVoice>();
  private readonly variants = new Map<string, EspeakVariantInfo>();

  constructor(
    voices: readonly EspeakVoiceInfo[],
    variants: readonly EspeakVariantInfo[],
    private readonly sampleRate: number,
  ) {
    for (const info of voices) {
      // The voice file name is what `espeak-ng -v` takes: `en-us`, `en-gb-x-rp`, `yue-latn-jyutping`.
      const fileName = info.identifier.slice(info.identifier.lastIndexOf('/') + 1).toLowerCase();
      const key = this.bases.has(fileName) ? info.identifier.toLowerCase().replaceAll('/', '-') : fileName;
      const language = toBcp47(info.languages[0] ?? fileName);
      this.bases.set(key, { key, identifier: info.identifier, name: info.name, language });
    }
    for (const variant of variants) {
      const id = toVariantId(variant.file);
      if (!this.variants.has(id)) this.variants.set(id, variant);
    }
  }

  /** Each language's default voice and its female variant. */
  list(): Voice[] {
    return [...this.bases.values()].flatMap((base) => {
      const female = this.choose(base, FEMALE_VARIANT);
      return [this.record(base), ...(female ? [female.voice] : [])];
    });
  }

  listVariants(): EspeakVariant[] {
    return [...this.variants.entries()]
      .map(([id, variant]) => ({ id, name: variant.name, gender: variant.gender }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Case-insensitive; undefined for anything but `espeak-ng:<known voice>` with an optional known `+<variant>`. */
  find(voiceId: string): EspeakVoiceChoice | undefined {
    const prefix = `${ESPEAK_ENGINE}:`;
    if (!voiceId.toLowerCase().startsWith(prefix)) return undefined;
    const [baseKey = '', variantKey, ...rest] = voiceId.slice(prefix.length).toLowerCase().split('+');
    const base = this.bases.get(baseKey);
    if (!base || rest.length > 0) return undefined;
    if (variantKey === undefined) return { voice: this.record(base), espeakName: base.identifier };
    return this.choose(base, variantKey);
  }

  private choose(base: BaseVoice, variantKey: string): EspeakVoiceChoice | undefined {
    const variant = this.variants.get(variantKey);
    if (!variant) return undefined;
    const label = variantKey === FEMALE_VARIANT ? 'female' : variant.name;
    return {
      voice: {
        ...this.record(base),
        id: `${ESPEAK_ENGINE}:${base.key}+${variantKey}`,
        name: `${base.name}, ${label}`,
        gender: variant.gender ?? 'male',
      },
      espeakName: `${base.identifier}+${variant.file}`,
    };
  }

  private record(base: BaseVoice): Voice {
    const language = preferredTag(base.language);
    return {
      id: `${ESPEAK_ENGINE}:${base.key}`,
      name: base.name,
      language,
      ...(language === base.language ? {} : { engineLanguage: base.language }),
      // eSpeak's default voices are male; only the variants change that.
      gender: 'male',
      engine: ESPEAK_ENGINE,
      sampleRate: this.sampleRate,
      wordTimings: true,
      phonemes: true,
    };
  }
}
