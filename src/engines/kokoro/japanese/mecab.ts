// Morphemes through MeCab (Debian: libmecab2) on the dictionary pyopenjtalk-plus reads with (Open JTalk's NAIST
// Japanese dictionary as pyopenjtalk-plus revised it, from its wheel on PyPI), through koffi: each word of the text
// with its part of speech and its pronunciation in katakana, the input of Open JTalk's reading (njd.ts). Loaded once
// per process; one call at a time (MeCab's tagger is not thread-safe, and JavaScript calls it from one thread).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import koffi from 'koffi';
import { AppError } from '../../../errors.js';

/** Debian's soname (package libmecab2). */
export const MECAB_LIBRARY = 'libmecab.so.2';
/** The pyopenjtalk-plus whose dictionary script/install-japanese-dictionary installs (pinned in japanese-dictionary.lock.json). */
export const DICTIONARY_VERSION = '0.4.1.post10';
/**
 * Where script/install-japanese-dictionary puts the dictionary: the files of pyopenjtalk-plus's wheel beside a dicrc
 * of voxreel's (the wheel has none, MeCab needs one), in `runtime/` at the top of the tree (gitignored).
 */
export const DEFAULT_DICTIONARY = fileURLToPath(new URL(`../../../../runtime/pyopenjtalk-plus-dictionary-${DICTIONARY_VERSION}`, import.meta.url));

const INSTALL_HINT =
  'run script/install-japanese-dictionary (it installs libmecab2 with apt, as root, and takes the dictionary from PyPI\'s pyopenjtalk-plus wheel)';

/** One morpheme as MeCab gives it. */
export interface RawMorpheme {
  surface: string;
  /** Its UTF-16 offset in the analysed text (MeCab skips the white space it does not make tokens of). */
  offset: number;
  /**
   * The dictionary's columns (naist-jdic's, as Open JTalk has them): part of speech and three subgroups, conjugation
   * type and form, base form, reading, pronunciation (katakana), accent/moras, chain rule. A word the dictionary
   * lacks has the first seven only.
   */
  features: string[];
}

interface Binding {
  create(argc: number, argv: string[]): unknown;
  parse(tagger: unknown, text: string): string | null;
  error(tagger: unknown): string | null;
}

export interface MecabOptions {
  /** The library (a soname or a file); default MECAB_LIBRARY, or MECAB_LIBRARY in the environment. */
  library?: string;
  /** The dictionary folder with its dicrc; default DEFAULT_DICTIONARY, or JAPANESE_DICTIONARY_DIR in the environment. */
  dictionary?: string;
}

// Surface, byte offset of the morpheme in the sentence, all features; the same for words the dictionary lacks.
const FORMAT = '%m\\t%ps\\t%H\\n';

function unavailable(message: string, cause?: unknown): AppError {
  return new AppError('ENGINE_UNAVAILABLE', { message, cause });
}

function bind(library: string): Binding {
  let loaded: ReturnType<typeof koffi.load>;
  try {
    loaded = koffi.load(library);
  } catch (cause) {
    throw unavailable(`Japanese text needs MeCab's library ${library} (Debian package libmecab2), which could not be loaded: ${INSTALL_HINT}`, cause);
  }
  return {
    create: loaded.func('void *mecab_new(int argc, const char **argv)'),
    parse: loaded.func('const char *mecab_sparse_tostr(void *mecab, const char *text)'),
    error: loaded.func('const char *mecab_strerror(void *mecab)'),
  } as Binding;
}

function checkDictionary(dictionary: string): void {
  if (existsSync(path.join(dictionary, 'sys.dic')) && existsSync(path.join(dictionary, 'dicrc'))) return;
  const which = dictionary === DEFAULT_DICTIONARY ? `pyopenjtalk-plus ${DICTIONARY_VERSION}'s dictionary is not installed` : `${dictionary} is no MeCab dictionary`;
  throw unavailable(`Japanese text needs MeCab's dictionary: ${which} (no sys.dic and dicrc in ${dictionary}); ${INSTALL_HINT}`);
}

/** Maps UTF-8 byte offsets of `text` to UTF-16 offsets. */
function byteToUnitOffsets(text: string): Int32Array {
  const offsets = new Int32Array(Buffer.byteLength(text) + 1);
  let byte = 0;
  let unit = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char);
    for (let i = 0; i < size; i++) offsets[byte + i] = unit;
    byte += size;
    unit += char.length;
  }
  offsets[byte] = unit;
  return offsets;
}

export class Mecab {
  private constructor(
    private readonly binding: Binding,
    private readonly tagger: unknown,
  ) {}

  /** Opens the dictionary with the library; throws an AppError (ENGINE_UNAVAILABLE) naming what is missing. */
  static open(options: MecabOptions = {}): Mecab {
    const library = options.library ?? (process.env.MECAB_LIBRARY || MECAB_LIBRARY);
    const dictionary = options.dictionary ?? (process.env.JAPANESE_DICTIONARY_DIR || DEFAULT_DICTIONARY);
    const binding = bind(library);
    checkDictionary(dictionary);
    // argv rather than one string: MeCab splits a single argument string at spaces, which a path may hold.
    // -r /dev/null: no mecabrc (Debian's /etc/mecabrc names another dictionary), everything from the dicrc and here.
    const argv = ['mecab', '-r', '/dev/null', '-d', dictionary, `-F${FORMAT}`, `-U${FORMAT}`, '-EEOS\\n'];
    const tagger = binding.create(argv.length, argv);
    if (!tagger) throw unavailable(`MeCab could not open the Japanese dictionary at ${dictionary}: ${binding.error(null) ?? 'no reason given'}; ${INSTALL_HINT}`);
    return new Mecab(binding, tagger);
  }

  /** The morphemes of `text`, in order. */
  parse(text: string): RawMorpheme[] {
    const output = this.binding.parse(this.tagger, text);
    if (output === null) throw new Error(`MeCab could not analyse the text: ${this.binding.error(this.tagger) ?? 'no reason given'}`);
    const units = byteToUnitOffsets(text);
    const morphemes: RawMorpheme[] = [];
    for (const line of output.split('\n')) {
      if (line === '' || line === 'EOS') continue;
      const [surface = '', byteOffset = '0', features = ''] = line.split('\t');
      morphemes.push({ surface, offset: units[Number(byteOffset)] ?? 0, features: features.split(',') });
    }
    return morphemes;
  }
}
