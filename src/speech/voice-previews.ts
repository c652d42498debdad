import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { individualTag } from '../engines/language-tags.js';
import type { Voice } from '../engines/voice.js';
import { writeAtomically } from '../storage/atomic-write.js';
import { storageFailed } from '../storage/storage.js';

/** What a voice says in its preview, by language tag (the longest prefix listed wins): "Hello, this is my voice." */
const SAMPLES: Readonly<Record<string, string>> = {
  en: 'Hello! This is how my voice sounds when I read your text.',
  af: 'Hallo, dit is my stem.',
  ar: 'مرحبا، هذا صوتي.',
  bg: 'Здравейте, това е моят глас.',
  bs: 'Zdravo, ovo je moj glas.',
  ca: 'Hola, aquesta és la meva veu.',
  cmn: '你好，这是我的声音。',
  'cmn-latn': 'Ni hao, zhe shi wo de shengyin.',
  cs: 'Dobrý den, toto je můj hlas.',
  cy: 'Helo, dyma fy llais.',
  da: 'Hej, dette er min stemme.',
  de: 'Hallo, das ist meine Stimme.',
  el: 'Γεια σας, αυτή είναι η φωνή μου.',
  eo: 'Saluton, jen mia voĉo.',
  es: 'Hola, esta es mi voz.',
  et: 'Tere, see on minu hääl.',
  eu: 'Kaixo, hau da nire ahotsa.',
  fa: 'سلام، این صدای من است.',
  fi: 'Hei, tämä on minun ääneni.',
  fr: 'Bonjour, voici ma voix.',
  he: 'שלום, זה הקול שלי.',
  hi: 'नमस्ते, यह मेरी आवाज़ है।',
  hr: 'Bok, ovo je moj glas.',
  hu: 'Helló, ez az én hangom.',
  id: 'Halo, ini suara saya.',
  is: 'Halló, þetta er röddin mín.',
  it: 'Ciao, questa è la mia voce.',
  ja: 'こんにちは、これは私の声です。',
  ko: '안녕하세요, 이것은 제 목소리입니다.',
  lt: 'Labas, tai mano balsas.',
  lv: 'Sveiki, šī ir mana balss.',
  ms: 'Helo, ini suara saya.',
  nb: 'Hei, dette er stemmen min.',
  nl: 'Hallo, dit is mijn stem.',
  no: 'Hei, dette er stemmen min.',
  pl: 'Dzień dobry, to jest mój głos.',
  pt: 'Olá, esta é a minha voz.',
  ro: 'Bună ziua, aceasta este vocea mea.',
  ru: 'Здравствуйте, это мой голос.',
  sk: 'Dobrý deň, toto je môj hlas.',
  sl: 'Pozdravljeni, to je moj glas.',
  sv: 'Hej, det här är min röst.',
  sw: 'Habari, hii ni sauti yangu.',
  th: 'สวัสดี นี่คือเสียงของฉัน',
  tr: 'Merhaba, bu benim sesim.',
  uk: 'Привіт, це мій голос.',
  vi: 'Xin chào, đây là giọng nói của tôi.',
  yue: '你好，呢個係我嘅聲音。',
  zh: '你好，这是我的声音。',
};

/** The preview sentence for a BCP-47 tag: the listed one, else the language's own name for itself, else English. */
export function previewText(language: string): string {
  // The spoken language first: `zh-HK` is Cantonese (`yue`), not the `zh` sample.
  for (const tag of [individualTag(language), language]) {
    const subtags = tag.toLowerCase().split('-');
    for (let length = subtags.length; length > 0; length -= 1) {
      const sample = SAMPLES[subtags.slice(0, length).join('-')];
      if (sample !== undefined) return sample;
    }
  }
  return autonym(language.toLowerCase().split('-')[0] ?? '') ?? (SAMPLES.en as string);
}

function autonym(code: string): string | undefined {
  try {
    const name = new Intl.DisplayNames([code], { type: 'language', fallback: 'none' }).of(code);
    return name && name.toLowerCase() !== code ? `${name}.` : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the preview's audio (MP3) into `output`, through the job limiter, and resolves once it has all been written there. */
export type MakePreview = (text: string, output: Writable) => Promise<void>;

const TEMP_DIR = '.tmp';

/**
 * Voice previews cached on disk, `<dir>/<key>.mp3`, made on their first request and kept: the key is a hash of the
 * voice id and the sentence, so a changed sentence makes a new file. Each is written under a temporary name in
 * `<dir>/.tmp` and renamed into place whole; requests that arrive while it is being made wait for that one run.
 */
export class VoicePreviews {
  private readonly making = new Map<string, Promise<void>>();

  constructor(readonly dir: string) {}

  /** Creates the folder and removes what an earlier process left half-written. */
  async init(clearTemp = true): Promise<void> {
    if (clearTemp) await rm(path.join(this.dir, TEMP_DIR), { recursive: true, force: true });
    await mkdir(path.join(this.dir, TEMP_DIR), { recursive: true });
  }

  /** The file name (in `dir`) of the voice's preview, made first with `make` when there is none yet. */
  async file(voice: Voice, make: MakePreview): Promise<string> {
    const text = previewText(voice.language);
    const name = `${createHash('sha256').update(`${voice.id}\n${text}`).digest('base64url').slice(0, 32)}.mp3`;
    // Checked and claimed in one synchronous step, so a run that finishes in between cannot be started again.
    let pending = this.making.get(name);
    if (pending === undefined && !existsSync(path.join(this.dir, name))) {
      pending = this.create(name, text, make).finally(() => this.making.delete(name));
      this.making.set(name, pending);
    }
    await pending;
    return name;
  }

  private create(name: string, text: string, make: MakePreview): Promise<void> {
    return writeAtomically(path.join(this.dir, name), path.join(this.dir, TEMP_DIR), (output) => make(text, output), { fileFailure: storageFailed });
  }
}
