// Child process entry: keeps one RHVoice engine (a C library, through koffi) and synthesizes one job at a time.
import { serveJobs } from '../hosts/host-runtime.js';
import { RhvoiceLibrary, type TextSpan } from './library.js';
import type { RhvoiceJob, RhvoiceResult, RhvoiceWordMark } from './protocol.js';
import { RHVOICE_VOICES } from './voices.js';
import { concatSamples } from '../wav.js';

const WARM_UP_TEXT = 'Hello there.';

const rhvoice = new RhvoiceLibrary();
// Each voice loads its data on first use: pay for that before saying ready.
const installed = new Set(rhvoice.voiceNames().map((name) => name.toLowerCase()));
const offered = RHVOICE_VOICES.map((voice) => voice.name).filter((name) => installed.has(name));
let sampleRate = 0;
for (const voice of offered) {
  const speech = synthesize(voice, WARM_UP_TEXT);
  if (speech.kind === 'speech') sampleRate = speech.sampleRate;
}

serveJobs<RhvoiceJob, RhvoiceResult>((job) =>
  job.kind === 'describe' ? { kind: 'description', voices: offered, sampleRate } : synthesize(job.voice, job.text),
);

function synthesize(voice: string, text: string): RhvoiceResult {
  if (!offered.includes(voice)) throw new Error(`RHVoice has no voice ${voice}`);
  const chunks: Int16Array[] = [];
  const words: RhvoiceWordMark[] = [];
  const open: RhvoiceWordMark[] = [];
  let sampleRate = 0;
  let delivered = 0;
  const ok = rhvoice.speak(voice, text, {
    sampleRate: (rate) => {
      // One voice, one rate: a change in the middle would need resampling.
      if (sampleRate !== 0 && rate !== sampleRate) return false;
      sampleRate = rate;
      return rate > 0;
    },
    samples: (samples) => {
      chunks.push(samples);
      delivered += samples.length;
      return true;
    },
    wordStarts: ({ position, length }: TextSpan) => {
      const word = { byteOffset: position, byteLength: length, startSample: delivered, endSample: delivered };
      words.push(word);
      open.push(word);
      return true;
    },
    wordEnds: ({ position }: TextSpan) => {
      const index = open.findIndex((word) => word.byteOffset === position);
      const [word] = index === -1 ? [] : open.splice(index, 1);
      if (word) word.endSample = delivered;
      return true;
    },
  });
  if (!ok || sampleRate === 0) throw new Error(`RHVoice failed to synthesize with ${voice}`);
  const samples = concatSamples(chunks);
  // A word the voice never closed ends where the speech does.
  for (const word of open) word.endSample = delivered;
  return { kind: 'speech', samples, sampleRate, words };
}
