// Child process entry: keeps one eSpeak NG WebAssembly instance warm and synthesizes one job at a time.
import createEspeakModule from '@echogarden/espeak-ng-emscripten';
import { serveJobs } from '../hosts/host-runtime.js';
import { concatSamples } from '../wav.js';
import { buildPhonemeTable } from './ipa.js';
import type { EspeakEvent, EspeakJob, EspeakResult, EspeakVariantInfo } from './protocol.js';

const VARIANTS_DIR = '/usr/share/espeak-ng-data/voices/!v';
const WARM_UP_TEXT =
  'The quick brown fox jumps over the lazy dog. "Sphinx of black quartz, judge my vow!" Pack my box with 25 jugs; ' +
  'how vexingly quick daft zebras jump? Dr. Smith paid $1,234.50 on 12/03/2024 &amp; left at 9:45 p.m. (really).';
const WARM_UP_ROUNDS = 4;

const espeak = await createEspeakModule();
const synthesizer = new espeak.eSpeakNGWorker();
let currentVoice: string | undefined;

// The first few syntheses run at a fraction of full speed until V8 has optimized the WebAssembly:
// pay for that before saying ready, not during the first requests.
for (let round = 0; round < WARM_UP_ROUNDS; round++) synthesize('gmw/en-US', WARM_UP_TEXT);

serveJobs<EspeakJob, EspeakResult>((job) => {
  switch (job.kind) {
    case 'describe':
      return describe();
    case 'synthesize':
      return synthesize(job.voice, job.ssml);
    case 'phoneme-table':
      return phonemeTable(job.voice);
  }
});

/** Loading a voice reads its dictionary: only when it changes. */
function useVoice(voice: string): void {
  if (voice === currentVoice) return;
  currentVoice = undefined;
  if (synthesizer.set_voice(voice) !== 0) throw new Error(`eSpeak NG has no voice ${voice}`);
  currentVoice = voice;
}

/** Each candidate mnemonic said alone (a space after ]]: straight before markup eSpeak reads on in phoneme mode). */
function phonemeTable(voice: string): EspeakResult {
  useVoice(voice);
  const entries = buildPhonemeTable((mnemonic) => {
    const said: string[] = [];
    synthesizer.synthesize(`[[${mnemonic}]] `, (_samples, events) => {
      for (const event of events) if (event.type === 'phoneme' && !isPause(event.id)) said.push(String(event.id));
      return false;
    });
    return said;
  });
  return { kind: 'phoneme-table', entries };
}

function synthesize(voice: string, ssml: string): EspeakResult {
  useVoice(voice);
  const chunks: Int16Array[] = [];
  const events: EspeakEvent[] = [];
  synthesizer.synthesize(ssml, (samples, rawEvents) => {
    if (samples.length > 0) chunks.push(samples);
    for (const event of rawEvents) {
      if (event.type !== 'word' && event.type !== 'phoneme' && event.type !== 'end') continue;
      events.push({
        type: event.type,
        textPosition: event.text_position,
        audioMs: event.audio_position,
        pause: event.type === 'phoneme' && isPause(event.id),
      });
    }
    return false;
  });
  return { kind: 'speech', samples: concatSamples(chunks), sampleRate: synthesizer.samplerate, events };
}

/** eSpeak reports its pause phonemes with an empty IPA name (or `_` names in ASCII mode). */
function isPause(id: string | number | undefined): boolean {
  return typeof id !== 'string' || id.trim() === '' || id.startsWith('_');
}

function describe(): EspeakResult {
  const voices = synthesizer.list_voices().map((voice) => ({
    identifier: voice.identifier,
    name: voice.name.trim(),
    languages: voice.languages.map((language) => language.name),
  }));
  return { kind: 'description', sampleRate: synthesizer.samplerate, voices, variants: listVariants() };
}

function listVariants(): EspeakVariantInfo[] {
  return espeak.FS.readdir(VARIANTS_DIR)
    .filter((file) => !file.startsWith('.'))
    .map((file) => {
      const definition = espeak.FS.readFile(`${VARIANTS_DIR}/${file}`, { encoding: 'utf8' });
      const name = /^\s*name\s+(\S.*?)\s*$/m.exec(definition)?.[1] ?? file;
      const gender = /^\s*gender\s+(\w+)/m.exec(definition)?.[1]?.toLowerCase();
      return { file, name, gender: gender === 'female' || gender === 'male' ? gender : null };
    });
}
