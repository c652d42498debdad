import { readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Voice } from '../voice.js';
import { toBcp47 } from '../espeak/voices.js';
import { findDurationsTensor } from './onnx-durations.js';
import type { PiperModelSpec } from './protocol.js';
import { parseVoiceConfig, scalesOf, type PiperVoiceConfig } from './voice-config.js';

export const PIPER_ENGINE = 'piper';

const MODEL_EXTENSION = '.onnx';
const CONFIG_EXTENSION = '.onnx.json';
const MODEL_CARD = 'MODEL_CARD';
const QUALITIES = ['x_low', 'low', 'medium', 'high'] as const;
type Quality = (typeof QUALITIES)[number];

/** A voice id resolved to what a host needs. */
export interface PiperVoiceChoice {
  voice: Voice;
  model: PiperModelSpec;
  speakerId: number;
}

/** A model file that is not listed, and why. */
export interface SkippedVoice {
  file: string;
  reason: string;
}

const languageNames = new Intl.DisplayNames(['en'], { type: 'language', style: 'short' });

/** `en_US` (Piper's code) to `en-US`. */
function languageTag(code: string): string {
  return toBcp47(code.replaceAll('_', '-'));
}

/** `US English`, `German (Germany)`; the tag itself when ICU does not know it. */
function languageName(tag: string): string {
  try {
    return languageNames.of(tag) ?? tag;
  } catch {
    return tag;
  }
}

/** `hfc_female` to `Hfc Female`. */
function displayWords(name: string): string {
  return name
    .split(/[_\s]+/u)
    .filter(Boolean)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}

/** A gender stated in the voice's model card (`* Gender: female`) or in its dataset name (`hfc_male`). */
function genderOf(dataset: string, modelCard: string | undefined): Voice['gender'] {
  const stated = modelCard && /^\W*(?:gender|sex)\s*:\s*(female|male)\b/imu.exec(modelCard)?.[1];
  const named = /(?:^|_)(female|male)(?:_|$)/iu.exec(dataset)?.[1];
  const gender = (stated || named || '').toLowerCase();
  return gender === 'female' || gender === 'male' ? gender : null;
}

/** Piper names its voices `<language>-<dataset>-<quality>`; the config may say each part better. */
function describeModel(name: string, config: PiperVoiceConfig): { dataset: string; language: string; quality: Quality | undefined } {
  const [fileLanguage = '', fileDataset, fileQuality] = name.split('-');
  const quality = [config.audio.quality, fileQuality].find((candidate) => QUALITIES.includes(candidate as Quality)) as Quality | undefined;
  const language = languageTag(config.language?.code ?? (/^[a-z]{2,3}_[A-Z]{2}$/u.test(fileLanguage) ? fileLanguage : config.espeak.voice));
  return { dataset: config.dataset ?? fileDataset ?? name, language, quality };
}

async function readModelCard(folder: string, name: string, onlyVoiceInFolder: boolean): Promise<string | undefined> {
  const candidates = [path.join(folder, `${name}.${MODEL_CARD}`), ...(onlyVoiceInFolder ? [path.join(folder, MODEL_CARD)] : [])];
  for (const file of candidates) {
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text !== undefined) return text;
  }
  return undefined;
}

/** `<voice>.onnx` files with their `<voice>.onnx.json`, anywhere under `dir`, in path order. */
async function findModels(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return [];
    throw error;
  });
  const files = new Set(entries.map((entry) => path.join(entry.parentPath, entry.name)));
  return [...files].filter((file) => file.endsWith(MODEL_EXTENSION) && files.has(`${file}.json`)).sort();
}

type Durations = PiperModelSpec['durations'];

/** Where a model's durations tensor is remembered: a hidden file beside it (removed with the voice, see script/voice-store.ts). */
export function durationsFile(modelPath: string): string {
  return path.join(path.dirname(modelPath), `.${path.basename(modelPath)}.durations.json`);
}

function isRemembered(value: unknown): value is { size: number; mtimeMs: number; durations: Durations } {
  if (typeof value !== 'object' || value === null) return false;
  const { size, mtimeMs, durations } = value as Record<string, unknown>;
  if (typeof size !== 'number' || typeof mtimeMs !== 'number') return false;
  if (durations === null) return true;
  return typeof durations === 'object' && typeof (durations as Record<string, unknown>).name === 'string' && typeof (durations as Record<string, unknown>).isOutput === 'boolean';
}

/**
 * The model's durations tensor, read from its graph once (0.1–0.2 s of CPU for a 63 MB model) and then remembered
 * beside it, keyed by the model's size and modification time, so that a start reads no model. Where the folder is
 * read-only the graph is read on each start, as before.
 */
export async function modelDurations(modelPath: string): Promise<Durations> {
  const { size, mtimeMs } = await stat(modelPath);
  const file = durationsFile(modelPath);
  const remembered: unknown = await readFile(file, 'utf8').then(JSON.parse, () => undefined).catch(() => undefined);
  if (isRemembered(remembered) && remembered.size === size && remembered.mtimeMs === mtimeMs) return remembered.durations;
  const durations = findDurationsTensor(modelPath) ?? null;
  const partial = `${file}.${process.pid}.part`;
  await writeFile(partial, `${JSON.stringify({ size, mtimeMs, durations })}\n`)
    .then(() => rename(partial, file))
    .catch(() => rm(partial, { force: true }));
  return durations;
}

/** The Piper voices installed under one folder, each `.onnx` model with its `.onnx.json` config beside it. */
export class PiperVoiceCatalog {
  private readonly byId = new Map<string, PiperVoiceChoice>();

  private constructor(readonly skipped: readonly SkippedVoice[]) {}

  /** Reads every voice's config and, once per model file, looks into its graph (for the durations that time words). */
  static async scan(dir: string | undefined): Promise<PiperVoiceCatalog> {
    const models = dir ? await findModels(path.resolve(dir)) : [];
    const skipped: SkippedVoice[] = [];
    const catalog = new PiperVoiceCatalog(skipped);
    const perFolder = new Map<string, number>();
    for (const model of models) perFolder.set(path.dirname(model), (perFolder.get(path.dirname(model)) ?? 0) + 1);
    for (const modelPath of models) {
      try {
        await catalog.add(modelPath, perFolder.get(path.dirname(modelPath)) === 1);
      } catch (error) {
        skipped.push({ file: modelPath, reason: error instanceof Error ? error.message : String(error) });
      }
    }
    return catalog;
  }

  get size(): number {
    return this.byId.size;
  }

  list(): Voice[] {
    return [...this.byId.values()].map((choice) => choice.voice);
  }

  /** Case-insensitive: `piper:<voice>`, or `piper:<voice>#<speaker>` for a model with several speakers. */
  find(voiceId: string): PiperVoiceChoice | undefined {
    return this.byId.get(voiceId.toLowerCase());
  }

  private async add(modelPath: string, onlyVoiceInFolder: boolean): Promise<void> {
    const name = path.basename(modelPath, MODEL_EXTENSION);
    const config = parseVoiceConfig(JSON.parse(await readFile(modelPath.slice(0, -MODEL_EXTENSION.length) + CONFIG_EXTENSION, 'utf8')));
    const durations = await modelDurations(modelPath);
    const { dataset, language, quality } = describeModel(name, config);
    const label = (speaker?: string) =>
      `${displayWords(dataset)}${speaker === undefined ? '' : ` ${speaker}`} (Piper${quality ? `, ${quality.replace('_', '-')}` : ''}), ${languageName(language)}`;
    const base: Voice = {
      id: `${PIPER_ENGINE}:${name}`,
      name: label(),
      language,
      gender: genderOf(dataset, await readModelCard(path.dirname(modelPath), name, onlyVoiceInFolder)),
      engine: PIPER_ENGINE,
      sampleRate: config.audio.sample_rate,
      wordTimings: durations !== null,
      phonemes: true,
      naturalSpeed: true,
      ...(quality ? { quality } : {}),
    };
    const model: PiperModelSpec = {
      modelPath,
      durations,
      espeakVoice: config.espeak.voice,
      sampleRate: config.audio.sample_rate,
      phonemeIds: config.phoneme_id_map,
      scales: scalesOf(config),
      multiSpeaker: config.num_speakers > 1,
    };
    const choices =
      config.num_speakers === 1
        ? [{ voice: base, model, speakerId: 0 }]
        : speakersOf(config).map(([speaker, speakerId]) => ({ voice: { ...base, id: `${base.id}#${speaker}`, name: label(speaker) }, model, speakerId }));
    const taken = choices.find((choice) => this.byId.has(choice.voice.id.toLowerCase()));
    if (taken) throw new Error(`another voice already has the id ${taken.voice.id}`);
    for (const choice of choices) this.byId.set(choice.voice.id.toLowerCase(), choice);
  }
}

/** Speaker names and ids, in id order; numbers when the config names none. */
function speakersOf(config: PiperVoiceConfig): [string, number][] {
  const named = Object.entries(config.speaker_id_map ?? {}).filter(([, id]) => id < config.num_speakers);
  const speakers = named.length > 0 ? named : Array.from({ length: config.num_speakers }, (_, id): [string, number] => [String(id), id]);
  return speakers.sort((a, b) => a[1] - b[1]);
}
