// Kokoro's voice packs: one style vector (256 floats) for each length of the phonemes it is to say (1 to 510), in a
// file of raw little-endian float32 [510, 256] (`<pack>.bin`, as kokoro-js and the Hugging Face ONNX export ship them).
// A pack's name says its language and gender: `af_heart` is American English, female.

export const KOKORO_ENGINE = 'kokoro';
/** The rows of a pack, and so the phoneme tokens one inference may take. */
export const PACK_ROWS = 510;
export const STYLE_SIZE = 256;
export const PACK_BYTES = PACK_ROWS * STYLE_SIZE * Float32Array.BYTES_PER_ELEMENT;
export const KOKORO_SAMPLE_RATE = 24_000;
/** The model file under the engine's folder (voices/kokoro/), and its packs' folder beside it. */
export const MODEL_FILE = 'kokoro-v1.0.int8.onnx';
export const PACKS_FOLDER = 'voices';

/** How a pack's language is read aloud: its BCP-47 tag, and eSpeak NG's voice for its phonemes (none: its own module). */
export interface PackLanguage {
  tag: string;
  espeakVoice?: string;
  /** misaki's English rules (EspeakFallback) rather than its other languages' (EspeakG2P); British or American. */
  english?: 'british' | 'american';
}

/** By the pack name's first letter, as Kokoro's pipeline names its languages (kokoro/pipeline.py LANG_CODES). */
export const PACK_LANGUAGES: Readonly<Record<string, PackLanguage>> = {
  a: { tag: 'en-US', espeakVoice: 'en-us', english: 'american' },
  b: { tag: 'en-GB', espeakVoice: 'en', english: 'british' },
  e: { tag: 'es', espeakVoice: 'es' },
  f: { tag: 'fr-FR', espeakVoice: 'fr' },
  h: { tag: 'hi', espeakVoice: 'hi' },
  i: { tag: 'it', espeakVoice: 'it' },
  j: { tag: 'ja' },
  p: { tag: 'pt-BR', espeakVoice: 'pt-br' },
  z: { tag: 'zh-CN', espeakVoice: 'cmn' },
};

/**
 * Each pack's overall grade as hexgrad's VOICES.md (Kokoro-82M v1.0) gives it, for the packs it grades that voxreel
 * can read: the recommended voice of a language is its best graded installed pack (recommended.ts).
 */
export const PACK_GRADES: Readonly<Record<string, string>> = {
  af_heart: 'A', af_bella: 'A-', af_nicole: 'B-', af_aoede: 'C+', af_kore: 'C+', af_sarah: 'C+', af_alloy: 'C', af_nova: 'C', af_sky: 'C-', af_jessica: 'D', af_river: 'D',
  am_fenrir: 'C+', am_michael: 'C+', am_puck: 'C+', am_echo: 'D', am_eric: 'D', am_liam: 'D', am_onyx: 'D', am_santa: 'D-', am_adam: 'F+',
  bf_emma: 'B-', bf_isabella: 'C', bf_alice: 'D', bf_lily: 'D', bm_fable: 'C', bm_george: 'C', bm_lewis: 'D+', bm_daniel: 'D',
  jf_alpha: 'C+', jf_gongitsune: 'C', jf_tebukuro: 'C', jf_nezumi: 'C-', jm_kumo: 'C-',
};

/** `af_heart`: a language letter, f or m, an underscore, a name. */
export const PACK_NAME = /^([abefhijpz])([fm])_([a-z0-9]+)$/u;

export interface PackInfo {
  name: string;
  language: PackLanguage;
  gender: 'female' | 'male';
  /** `Heart`. */
  displayName: string;
}

/** What a pack's name says of it; undefined for a name that is not a pack's. */
export function packInfo(name: string): PackInfo | undefined {
  const [, letter = '', gender, rest = ''] = PACK_NAME.exec(name) ?? [];
  const language = PACK_LANGUAGES[letter];
  if (!language) return undefined;
  return { name, language, gender: gender === 'f' ? 'female' : 'male', displayName: rest.charAt(0).toUpperCase() + rest.slice(1) };
}
