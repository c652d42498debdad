import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Judge, JUDGE_DIR, judgeInstalled, QUALITY_PARAGRAPH, wordErrorRate } from '../test/helpers/judge.js';
import { postOk, warmVoices, type Service } from './service.js';
import { measureSpeech, type SpeechResult } from './speech.js';
import { inRounds, median, round, timings, type Timings } from './stats.js';
import { narrationOf, textOf } from './texts.js';
import { PORTRAIT } from './video.js';

/** The neural voice that issue 11 measures end to end. */
export const NEURAL_VOICE = 'piper:en_US-joe-medium';

/** Kokoro-82M's recommended American English pack (issue 37), measured beside Piper's. */
export const KOKORO_VOICE = 'kokoro:af_heart';

/** Each engine's main English voice, the most natural first; only those the server lists are measured. */
export const ENGLISH_VOICES = [KOKORO_VOICE, NEURAL_VOICE, 'rhvoice:clb', 'festival:slt-hts', 'flite:slt', 'espeak-ng:en-us'];

/** Seconds of audio per second of wall time: the median and every run. */
export interface Factor {
  p50: number;
  runs: number[];
}

export interface RealTimeRow {
  voice: string;
  characters: number;
  /** Seconds of audio of one answer. */
  audioSeconds: number;
  /** One request at a time. */
  one: Factor;
  /** Two requests at once: both answers' audio over the wall time until the later one. */
  two: Factor;
}

export interface WordErrorRow {
  voice: string;
  /** Word edits / words of QUALITY_PARAGRAPH, as Whisper base heard it (test/helpers/judge.ts). */
  wordErrorRate: number;
  /** DNSMOS P.808 of the same reading, 1–5 (absent from results measured with PocketSphinx, before issue 23). */
  dnsmos?: number;
  heard: string;
}

export type WordErrorRates = { measured: true; rows: WordErrorRow[] } | { measured: false; reason: string };

export interface NeuralVideo {
  voice: string;
  case: string;
  /** Narration asked for, in seconds (the text is scaled by the voice's measured rate); `duration` is what it came to. */
  plannedSeconds: number;
  characters: number;
  duration: number;
  /** POST /tts-video, constant frame rate, end to end. */
  time: Timings;
  /** Seconds of video per second of wall time, from the p50. */
  timesRealTime: number;
}

export interface VoicesResult {
  /** ENGLISH_VOICES that the server lists; the others are in `missing`. */
  voices: string[];
  missing: string[];
  realTime: RealTimeRow[];
  wordErrorRates: WordErrorRates;
  /** The neural voices (Piper's, Kokoro's) streamed by /v1/audio/speech; null when neither is installed. */
  speech: SpeechResult | null;
  video: NeuralVideo | null;
}

export interface VoicesPlan {
  runs: number;
  /** Narration of the real-time factor requests, in seconds of eSpeak NG speech. */
  seconds: number;
  videoSeconds: number;
}

interface AudioAnswer {
  url: string;
  duration: number;
}

/**
 * Issue 11 on the real service: each listed English voice's real-time factor (POST /tts, wav, one and two at a time),
 * its word error rate and DNSMOS on QUALITY_PARAGRAPH (the tests' judge), then the neural voice streamed and as a 1080×1920 video.
 */
export async function measureVoices(service: Service, plan: VoicesPlan, workDir: string): Promise<VoicesResult> {
  const voices = await warmVoices(service, ENGLISH_VOICES);
  const missing = ENGLISH_VOICES.filter((voice) => !voices.includes(voice));
  if (missing.length) console.log(`  not listed by GET /voices, not measured: ${missing.join(', ')}`);
  const realTime = await measureRealTime(service, voices, plan);
  const wordErrorRates = await measureWordErrorRates(service, voices, workDir);
  const neural = voices.includes(NEURAL_VOICE);
  const streamed = [NEURAL_VOICE, KOKORO_VOICE].filter((voice) => voices.includes(voice));
  const speech = streamed.length > 0 ? await measureSpeech(service, streamed, plan.runs) : null;
  const rate = realTime.find((row) => row.voice === NEURAL_VOICE);
  const video = neural && rate ? await measureNeuralVideo(service, plan, rate.characters / rate.audioSeconds) : null;
  return { voices, missing, realTime, wordErrorRates, speech, video };
}

async function speak(service: Service, text: string, voice: string): Promise<AudioAnswer> {
  return (await postOk<AudioAnswer>(`${service.baseUrl}/tts`, { text, voice, format: 'wav' })).body;
}

async function measureRealTime(service: Service, voices: readonly string[], plan: VoicesPlan): Promise<RealTimeRow[]> {
  const text = narrationOf(plan.seconds);
  const items = voices.map((voice) => ({ voice, audioSeconds: 0, one: [] as number[], two: [] as number[] }));
  // Audio seconds of `requests` answers at once over the wall time until the last of them.
  const factor = async (voice: string, requests: number) => {
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: requests }, () => speak(service, text, voice)));
    const seconds = (performance.now() - started) / 1000;
    return { audioSeconds: answers[0]?.duration ?? Number.NaN, factor: answers.reduce((sum, answer) => sum + answer.duration, 0) / seconds };
  };
  await inRounds(
    items,
    () => plan.runs,
    async (item) => {
      const one = await factor(item.voice, 1);
      item.audioSeconds = one.audioSeconds;
      item.one.push(one.factor);
      item.two.push((await factor(item.voice, 2)).factor);
    },
  );
  const factorOf = (runs: readonly number[]): Factor => ({ p50: round(median(runs), 1), runs: runs.map((value) => round(value, 1)) });
  return items.map((item) => {
    const row = { voice: item.voice, characters: text.length, audioSeconds: round(item.audioSeconds, 2), one: factorOf(item.one), two: factorOf(item.two) };
    console.log(`  /tts ${row.voice}, ${row.audioSeconds.toFixed(1)} s of audio: ${row.one.p50}× real time one at a time, ${row.two.p50}× two at once`);
    return row;
  });
}

async function measureWordErrorRates(service: Service, voices: readonly string[], workDir: string): Promise<WordErrorRates> {
  if (!judgeInstalled()) {
    const reason = `the judge of speech quality is not installed in ${JUDGE_DIR} (script/setup --test)`;
    console.log(`  word error rates not measured: ${reason}`);
    return { measured: false, reason };
  }
  const judge = await Judge.start();
  try {
    const rows: WordErrorRow[] = [];
    for (const voice of voices) {
      const answer = await speak(service, QUALITY_PARAGRAPH, voice);
      // The answer's URL is CDN_URL's; the file is fetched from this server under the same path.
      const response = await fetch(`${service.baseUrl}${new URL(answer.url).pathname}`, { signal: AbortSignal.timeout(30_000) });
      if (!response.ok) throw new Error(`GET ${answer.url}: ${response.status}`);
      const file = path.join(workDir, 'recognized.wav');
      await writeFile(file, Buffer.from(await response.arrayBuffer()));
      const { transcript, dnsmos } = await judge.judge(file);
      const row = { voice, wordErrorRate: round(wordErrorRate(QUALITY_PARAGRAPH, transcript), 3), dnsmos: round(dnsmos, 2), heard: transcript.trim() };
      console.log(`  word error rate ${voice}: ${(100 * row.wordErrorRate).toFixed(1)}%, DNSMOS ${dnsmos.toFixed(2)}`);
      rows.push(row);
    }
    return { measured: true, rows };
  } finally {
    await judge.close();
  }
}

/** POST /tts-video at PORTRAIT, constant rate, with about `plan.videoSeconds` of the neural voice's narration. */
async function measureNeuralVideo(service: Service, plan: VoicesPlan, charactersPerSecond: number): Promise<NeuralVideo> {
  const text = textOf(Math.round(charactersPerSecond * plan.videoSeconds));
  let duration = 0;
  const ms: number[] = [];
  for (let run = 0; run < plan.runs; run += 1) {
    const answer = await postOk<{ duration: number }>(`${service.baseUrl}/tts-video`, {
      text,
      voice: NEURAL_VOICE,
      resolution: PORTRAIT.resolution,
      aspect_ratio: PORTRAIT.aspectRatio,
      frame_rate: 'constant',
    });
    duration = answer.body.duration;
    ms.push(answer.ms);
  }
  const time = timings(ms);
  const timesRealTime = round(duration / (time.p50 / 1000), 1);
  console.log(`  /tts-video ${NEURAL_VOICE} ${PORTRAIT.label}, ${duration.toFixed(1)} s, constant rate: ${time.p50} ms (${timesRealTime}× real time)`);
  return { voice: NEURAL_VOICE, case: PORTRAIT.label, plannedSeconds: plan.videoSeconds, characters: text.length, duration, time, timesRealTime };
}
