// Which voice is recommended for each language, and which one the service speaks at start-up (WARM_VOICE).
import type { EngineName } from './types.js';
import type { Voice } from './voice.js';

/** A short sentence each engine can say: what warming a voice speaks. */
export const WARM_TEXT = 'Hello.';

const QUALITY_ORDER = ['high', 'medium', 'low', 'x_low'];

/** Within one engine, lower is better: the publisher's grade (A before A- before B+), else Piper's quality, else none. */
function standing(voice: Voice): number {
  if (voice.grade) {
    const letter = 'ABCDEF'.indexOf(voice.grade.charAt(0));
    return letter < 0 ? 100 : letter * 3 + ({ '+': 0, '-': 2 }[voice.grade.charAt(1)] ?? 1);
  }
  const quality = voice.quality ? QUALITY_ORDER.indexOf(voice.quality) : -1;
  return quality < 0 ? 100 : quality;
}

/**
 * Marks one voice per language tag `recommended`: the most natural engine's best voice (by its publisher's grade or
 * quality, then by id), engines ranked most natural first.
 */
export function markRecommended(voices: readonly Voice[], naturalness: readonly EngineName[] = []): Voice[] {
  const best = new Map<string, Voice>();
  const rank = (voice: Voice) => naturalness.indexOf(voice.engine);
  for (const voice of [...voices].sort((a, b) => rank(a) - rank(b) || standing(a) - standing(b) || (a.id < b.id ? -1 : 1))) {
    if (!best.has(voice.language)) best.set(voice.language, voice);
  }
  const chosen = new Set(best.values());
  return voices.map((voice) => (chosen.has(voice) ? { ...voice, recommended: true } : voice));
}

/** The start-up voice among `voices` (marked): `auto` is the recommended American English one, else any English one (the registry passes only engines that are not heavy). */
export function startUpVoice(voices: readonly Voice[], choice: string, find: (id: string) => Voice | undefined): Voice | undefined {
  if (choice !== 'auto') return find(choice);
  return voices.find((voice) => voice.recommended && voice.language === 'en-US') ?? voices.find((voice) => voice.recommended && voice.language.startsWith('en'));
}
