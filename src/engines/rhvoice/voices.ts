import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Voice } from '../voice.js';

export const RHVOICE_ENGINE = 'rhvoice';
/** Where Debian's rhvoice-english puts each voice (voice.info, data). */
const RHVOICE_VOICES_DIR = '/usr/share/RHVoice/voices';

/**
 * The English voices offered: the CMU ARCTIC ones. Not evgeniy-eng or lyubov, whose licence forbids commercial use.
 * voice.info says only "English" and the library says US for all of them: Alan is CMU ARCTIC's awb, a Scottish
 * speaker, like Flite's awb.
 */
export const RHVOICE_VOICES: readonly { name: string; language: string }[] = [
  { name: 'alan', language: 'en-GB-scotland' },
  { name: 'bdl', language: 'en-US' },
  { name: 'clb', language: 'en-US' },
  { name: 'slt', language: 'en-US' },
];

/** The offered voices installed here (those with a voice.info), with their gender from it; the sample rate is the host's to tell (0 until then). */
export async function installedRhvoiceVoices(voicesDir = RHVOICE_VOICES_DIR): Promise<Voice[]> {
  const voices = await Promise.all(
    RHVOICE_VOICES.map(async ({ name, language }): Promise<Voice | undefined> => {
      let info: string;
      try {
        info = await readFile(join(voicesDir, name, 'voice.info'), 'utf8');
      } catch {
        return undefined;
      }
      const gender = /^\s*gender\s*=\s*(\w+)/m.exec(info)?.[1]?.toLowerCase();
      const displayName = /^\s*name\s*=\s*(.+?)\s*$/m.exec(info)?.[1] ?? name;
      return {
        id: `${RHVOICE_ENGINE}:${name}`,
        name: `${displayName}, ${language === 'en-US' ? 'US' : 'Scottish'} English`,
        language,
        gender: gender === 'female' || gender === 'male' ? gender : null,
        engine: RHVOICE_ENGINE,
        sampleRate: 0,
        wordTimings: true,
        phonemes: false,
      };
    }),
  );
  return voices.filter((voice) => voice !== undefined);
}
