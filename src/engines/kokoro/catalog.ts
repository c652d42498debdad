// The Kokoro model and voice packs installed under VOICES_DIR/kokoro/ (script/voices.ts puts them there): a voice
// per pack, `kokoro:<pack>`, and any blend of installed packs (blend.ts).
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Voice } from '../voice.js';
import { blendName, parseBlend, type BlendPart } from './blend.js';
import { KOKORO_ENGINE, KOKORO_SAMPLE_RATE, MODEL_FILE, PACK_BYTES, PACK_GRADES, PACKS_FOLDER, packInfo, type PackInfo, type PackLanguage } from './packs.js';
import type { StylePart } from './protocol.js';

/** The engine's folder in the voices folder. */
export const KOKORO_FOLDER = 'kokoro';
const PACK_EXTENSION = '.bin';

/** A voice id resolved to what the host needs. */
export interface KokoroVoiceChoice {
  voice: Voice;
  language: PackLanguage;
  style: StylePart[];
}

/** A file that is not listed, and why. */
export interface SkippedPack {
  file: string;
  reason: string;
}

const languageNames = new Intl.DisplayNames(['en'], { type: 'language', style: 'short' });

interface InstalledPack extends PackInfo {
  file: string;
}

function describe(pack: InstalledPack): Voice {
  return {
    id: `${KOKORO_ENGINE}:${pack.name}`,
    name: `${pack.displayName} (Kokoro), ${languageNames.of(pack.language.tag) ?? pack.language.tag}`,
    language: pack.language.tag,
    gender: pack.gender,
    engine: KOKORO_ENGINE,
    sampleRate: KOKORO_SAMPLE_RATE,
    wordTimings: true,
    phonemes: true,
    naturalSpeed: true,
    ...(PACK_GRADES[pack.name] ? { grade: PACK_GRADES[pack.name] } : {}),
  };
}

export class KokoroCatalog {
  private constructor(
    /** The model file, or undefined: not installed, no voices. */
    readonly modelPath: string | undefined,
    private readonly packs: ReadonlyMap<string, InstalledPack>,
    readonly skipped: readonly SkippedPack[],
  ) {}

  /** `dir`: VOICES_DIR; the model and packs are under its kokoro/ folder. */
  static async scan(dir: string | undefined): Promise<KokoroCatalog> {
    const folder = dir ? path.resolve(dir, KOKORO_FOLDER) : undefined;
    const modelPath = folder && (await stat(path.join(folder, MODEL_FILE)).then((found) => found.isFile(), () => false)) ? path.join(folder, MODEL_FILE) : undefined;
    const packs = new Map<string, InstalledPack>();
    const skipped: SkippedPack[] = [];
    const packsDir = folder && path.join(folder, PACKS_FOLDER);
    const files = packsDir ? await readdir(packsDir).catch(() => []) : [];
    for (const name of files.filter((file) => file.endsWith(PACK_EXTENSION)).sort()) {
      const file = path.join(packsDir as string, name);
      const info = packInfo(name.slice(0, -PACK_EXTENSION.length));
      const size = (await stat(file)).size;
      if (!info) skipped.push({ file, reason: 'not a Kokoro pack name (a language letter, f or m, _, a name: af_heart)' });
      else if (size !== PACK_BYTES) skipped.push({ file, reason: `${size} bytes, not a voice pack's ${PACK_BYTES} (510 rows of 256 float32)` });
      else packs.set(info.name, { ...info, file });
    }
    return new KokoroCatalog(modelPath, modelPath ? packs : new Map(), skipped);
  }

  get size(): number {
    return this.packs.size;
  }

  /** One voice per pack; blends are found, not listed. */
  list(): Voice[] {
    return [...this.packs.values()].map(describe);
  }

  /** `kokoro:<pack>` or a blend of installed packs (`kokoro:af_bella(2)+af_sky(1)`), case-insensitive. */
  find(voiceId: string): KokoroVoiceChoice | undefined {
    const prefix = `${KOKORO_ENGINE}:`;
    if (voiceId.slice(0, prefix.length).toLowerCase() !== prefix) return undefined;
    const parts = parseBlend(voiceId.slice(prefix.length));
    const packs = parts?.map((part) => this.packs.get(part.pack));
    if (!parts || !packs || packs.some((pack) => pack === undefined)) return undefined;
    const installed = packs as InstalledPack[];
    const [first] = installed as [InstalledPack];
    const style = installed.map((pack, index) => ({ file: pack.file, weight: (parts[index] as BlendPart).weight }));
    if (installed.length === 1) return { voice: describe(first), language: first.language, style };
    const genders = new Set(installed.map((pack) => pack.gender));
    const shares = parts.map((part, index) => `${(installed[index] as InstalledPack).displayName} ${Math.round(part.weight * 100)} %`).join(', ');
    const voice: Voice = {
      ...describe(first),
      id: `${prefix}${blendName(parts)}`,
      name: `${shares} (Kokoro blend), ${languageNames.of(first.language.tag) ?? first.language.tag}`,
      gender: genders.size === 1 ? first.gender : null,
    };
    return { voice, language: first.language, style };
  }
}
