// The voices every front door offers: listed, found by id, filtered by language, and the one to use when none is named.
import type { EngineRegistry, UnavailableEngine } from '../engines/index.js';
import { matchesLanguage } from '../engines/language-tags.js';
import { startUpVoice } from '../engines/recommended.js';
import type { Voice } from '../engines/voice.js';

/** The voice catalogue of this process's engines, as the front doors ask for it. */
export class VoiceCatalog {
  constructor(private readonly engines: Pick<EngineRegistry, 'listVoices' | 'findVoice' | 'unavailable' | 'piperRuntime'>) {}

  /** Every voice, or those that speak `language` (a BCP 47 tag or a prefix of one: `en`, `en-GB`). */
  listVoices(language?: string): Voice[] {
    const voices = this.engines.listVoices();
    return language === undefined ? voices : voices.filter((voice) => speaks(voice, language));
  }

  findVoice(id: string): Voice | undefined {
    return this.engines.findVoice(id);
  }

  /** Engines installed but not started (a missing library, a failed start), with why. */
  unavailable(): UnavailableEngine[] {
    return this.engines.unavailable();
  }

  /** The recommended voice of `language`; with none given, the recommended English one (the start-up voice's rule). */
  recommendedVoice(language?: string): Voice | undefined {
    const voices = this.engines.listVoices();
    if (language !== undefined) return voices.find((voice) => voice.recommended && matchesLanguage(language, voice.language));
    return startUpVoice(voices, 'auto', (id) => this.engines.findVoice(id));
  }

  /** The ONNX Runtime and phonemizer the neural voices run on (health), where they are installed. */
  piperRuntime(): ReturnType<EngineRegistry['piperRuntime']> {
    return this.engines.piperRuntime();
  }
}

function speaks(voice: Voice, language: string): boolean {
  return matchesLanguage(language, voice.language) || (voice.engineLanguage !== undefined && matchesLanguage(language, voice.engineLanguage));
}
