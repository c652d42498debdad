/**
 * Piper through voxreel against PyPI's piper-tts (the engine voxreel wraps), same voice, same text, side by side:
 * piper-tts in one Python process with the voice loaded, voxreel's PiperEngine warm, each fed sentence by sentence
 * with two sentences in flight (as voxreel's synthesizer feeds its engine; piper-tts through a pool of two threads,
 * its onnxruntime runs letting go of the GIL); runs interleaved, medians compared. The user's way (the service's
 * /tts against piper-tts's synthesize_wav) is piper-as-user.ts. Also the first audio of a short
 * sentence (what a streamed answer's first byte waits for) and the resident memory of each side.
 *
 *   node --import tsx bench/piper-compare.ts [--runs 5] [--python /tmp/piper-venv/bin/python] [--install]
 *
 * piper-tts ships nothing into voxreel: it lives in a virtual environment of its own, which `--install` (or
 * installPiperTts()) makes when it is missing: python3 -m venv /tmp/piper-venv && /tmp/piper-venv/bin/pip install 'piper-tts==1.8.*'
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { PiperEngine } from '../src/engines/piper/engine.js';
import { splitSentences } from '../src/speech/sentences.js';
import { pythonWith, PythonLines } from './python.js';
import { runtimeEnv, type Runtime } from './runtimes.js';
import { median, round, timings, type Timings } from './stats.js';
import { narrationOf, textOf } from './texts.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEFAULT_VENV = '/tmp/piper-venv';
export const DEFAULT_PYTHON = path.join(DEFAULT_VENV, 'bin', 'python');
const PIPER_TTS_REQUIREMENT = 'piper-tts==1.8.*';
const VOICE = 'en_US-joe-medium';
/** As the synthesizer speaks a text (SENTENCES_IN_FLIGHT in src/speech/synthesizer.ts). */
const SENTENCES_IN_FLIGHT = 2;
const CLOCK_TICKS_PER_SECOND = 100;

/** piper-tts, the voice loaded once; then one JSON line in (the text), one out (times, samples, memory) per run. */
const PIPER_TTS = String.raw`
import io, json, sys, time, wave
from concurrent.futures import ThreadPoolExecutor
import numpy as np
from piper import PiperVoice
voice = PiperVoice.load(sys.argv[1])
pool = ThreadPoolExecutor(max_workers=2)
def rss_kb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
def sentence_audio(ids):
    # What synthesize() does per sentence: the model's audio, peak-normalized, as 16-bit samples.
    audio = voice.phoneme_ids_to_audio(ids)
    peak = np.max(np.abs(audio))
    audio = np.zeros_like(audio) if peak < 1e-8 else audio / peak
    return (np.clip(audio, -1.0, 1.0) * 32767).astype(np.int16).tobytes()
def chunks(text, mode):
    if mode == "in-flight":
        # Two sentences in flight (onnxruntime's run lets go of the GIL), in order, as voxreel's synthesizer feeds its engine.
        ids = [voice.phonemes_to_ids(phonemes) for phonemes in voice.phonemize(text) if phonemes]
        yield from pool.map(sentence_audio, ids)
    elif mode == "wav":
        # As a user writes a file: PiperVoice.synthesize_wav into a WAV writer.
        buffer = io.BytesIO()
        with wave.open(buffer, "wb") as wav_file:
            voice.synthesize_wav(text, wav_file)
        yield buffer.getvalue()[44:]
    else:
        for chunk in voice.synthesize(text):
            yield chunk.audio_int16_bytes
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    ask = json.loads(line)
    start, cpu, first, samples = time.perf_counter(), time.process_time(), None, 0
    for chunk in chunks(ask["text"], ask.get("mode", "stream")):
        samples += len(chunk) // 2
        first = first if first is not None else time.perf_counter() - start
    print(json.dumps({"seconds": time.perf_counter() - start, "cpuSeconds": time.process_time() - cpu, "firstSeconds": first,
                      "audioSeconds": samples / voice.config.sample_rate, "rssKb": rss_kb()}), flush=True)
`;

export interface PiperCompareOptions {
  /** Timed runs of the long text on each side (after one untimed run each). */
  runs?: number;
  /** Timed short sentences on each side per run. */
  firstRuns?: number;
  /** Python with piper-tts installed. */
  python?: string;
  voicesDir?: string;
  /** About this many seconds of narration (bench/texts.ts). */
  seconds?: number;
  /** Cores an inference may use (the service passes CONCURRENCY, by default the cores). */
  poolSize?: number;
  /** The ONNX Runtime voxreel's Piper host runs on (bench/runtimes.ts); piper-tts always runs PyPI's. */
  runtime?: Runtime;
}

/** Audio seconds made per second of wall time (× real time), with the CPU seconds each run took. */
export interface Speed {
  p50: number;
  runs: number[];
  cpuSeconds: number[];
}

export type PiperComparison =
  | {
      measured: true;
      voice: string;
      characters: number;
      audioSeconds: { voxreel: number; piperTts: number };
      voxreel: Speed;
      piperTts: Speed;
      /** voxreel's speed over piper-tts's, run by run (each pair back to back), and its median. */
      ratio: { p50: number; runs: number[] };
      /** Milliseconds to a short sentence's audio, warm. */
      firstAudio: { text: string; voxreel: Timings; piperTts: Timings };
      /** Resident memory after the runs, MB: voxreel's Piper host processes (all of them) and the Python process. */
      memory: { voxreelHostsMb: number; voxreelHosts: number; piperTtsMb: number };
    }
  | { measured: false; reason: string };

export interface PythonAnswer {
  seconds: number;
  cpuSeconds: number;
  firstSeconds: number;
  audioSeconds: number;
  rssKb: number;
}

/** How piper-tts speaks a text: sentence by sentence (`synthesize`), into a WAV writer (`synthesize_wav`), or two sentences in flight. */
export type PiperTtsMode = 'stream' | 'wav' | 'in-flight';

/** piper-tts in its Python process, the voice loaded: a text in, its times out. */
export class PiperTts {
  private constructor(private readonly lines: PythonLines) {}

  static async start(python: string, model: string): Promise<PiperTts> {
    return new PiperTts(await PythonLines.start(python, PIPER_TTS, [model], { name: 'piper-tts', ready: true }));
  }

  speak(text: string, mode: PiperTtsMode = 'stream'): Promise<PythonAnswer> {
    return this.lines.ask<PythonAnswer>({ text, mode });
  }

  close(): void {
    this.lines.close();
  }
}

/** User and system CPU seconds of a process so far (Linux). */
async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

async function rssMbOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN) / 1024;
}

async function hostsCpuSeconds(engine: PiperEngine): Promise<number> {
  const seconds = await Promise.all(engine.pids().map(cpuSecondsOf));
  return seconds.reduce((sum, value) => sum + value, 0);
}

/** The sentences spoken as the synthesizer speaks them: in order, two in flight. */
async function speakText(engine: PiperEngine, voiceId: string, sentences: readonly string[]): Promise<number> {
  let next = 0;
  let samples = 0;
  let sampleRate = 1;
  const lane = async () => {
    while (next < sentences.length) {
      const chunk = await engine.synthesize(voiceId, sentences[next++] as string);
      samples += chunk.samples.length;
      sampleRate = chunk.sampleRate;
    }
  };
  await Promise.all(Array.from({ length: SENTENCES_IN_FLIGHT }, lane));
  return samples / sampleRate;
}

/** Makes the virtual environment with piper-tts when it has none; resolves with its python. */
export function installPiperTts(venv = DEFAULT_VENV): Promise<string> {
  return pythonWith(venv, PIPER_TTS_REQUIREMENT, 'piper');
}

/** Runs the comparison; `measured: false` with the reason when piper-tts or the voice is missing. */
export async function comparePiper(options: PiperCompareOptions = {}): Promise<PiperComparison> {
  const { runs = 3, firstRuns = 5, python = DEFAULT_PYTHON, seconds = 80, poolSize = availableParallelism() } = options;
  const voicesDir = options.voicesDir ?? path.join(ROOT, 'voices');
  const model = path.join(voicesDir, `${VOICE}.onnx`);
  if (!existsSync(model)) return { measured: false, reason: `${model} is not installed` };
  if (!existsSync(python)) return { measured: false, reason: `${python} is missing (install piper-tts into a virtual environment)` };
  const text = narrationOf(seconds);
  const sentences = splitSentences(text).map((span) => span.text);
  const short = splitSentences(textOf(2000))[0]?.text ?? 'Hello.';
  const voiceId = `piper:${VOICE}`;

  let tts: PiperTts | undefined;
  let engine: PiperEngine | undefined;
  try {
    tts = await PiperTts.start(python, model).catch((error: unknown) => {
      throw new Error(`piper-tts could not start: ${(error as Error).message}`);
    });
    engine = await PiperEngine.create({ voicesDir, poolSize, onnxRuntimeLibrary: runtimeEnv(options.runtime ?? 'pypi').ONNXRUNTIME_LIBRARY });
    // Warm: each side loads its model and runs once before anything is timed.
    await tts.speak(text, 'in-flight');
    await speakText(engine, voiceId, sentences);
    await engine.synthesize(voiceId, short);

    const ours = { runs: [] as number[], cpu: [] as number[], first: [] as number[], audio: 0 };
    const theirs = { runs: [] as number[], cpu: [] as number[], first: [] as number[], audio: 0 };
    const ratios: number[] = [];
    const runOurs = async () => {
      const cpu = await hostsCpuSeconds(engine as PiperEngine);
      const started = performance.now();
      ours.audio = await speakText(engine as PiperEngine, voiceId, sentences);
      ours.runs.push(ours.audio / ((performance.now() - started) / 1000));
      ours.cpu.push((await hostsCpuSeconds(engine as PiperEngine)) - cpu);
      for (let run = 0; run < firstRuns; run++) {
        const began = performance.now();
        await (engine as PiperEngine).synthesize(voiceId, short);
        ours.first.push(performance.now() - began);
      }
    };
    const runTheirs = async () => {
      const answer = await (tts as PiperTts).speak(text, 'in-flight');
      theirs.audio = answer.audioSeconds;
      theirs.runs.push(answer.audioSeconds / answer.seconds);
      theirs.cpu.push(answer.cpuSeconds);
      for (let run = 0; run < firstRuns; run++) theirs.first.push((await (tts as PiperTts).speak(short)).firstSeconds * 1000);
    };
    for (let pass = 0; pass < runs; pass++) {
      // Back to back, the order swapped each round: a busy spell of the machine falls on both sides alike.
      if (pass % 2 === 0) await runOurs().then(runTheirs);
      else await runTheirs().then(runOurs);
      ratios.push((ours.runs.at(-1) as number) / (theirs.runs.at(-1) as number));
      console.log(
        `  round ${pass + 1}: voxreel ${round1(ours.runs.at(-1))}× real time, piper-tts ${round1(theirs.runs.at(-1))}× ` +
          `(ratio ${round(ratios.at(-1) as number, 2)}); CPU ${round1(ours.cpu.at(-1))} s against ${round1(theirs.cpu.at(-1))} s`,
      );
    }
    const pids = engine.pids();
    const hostsMb = (await Promise.all(pids.map(rssMbOf))).reduce((sum, value) => sum + value, 0);
    const pythonMb = (await tts.speak(short)).rssKb / 1024;
    const speed = (side: typeof ours): Speed => ({ p50: round(median(side.runs), 2), runs: side.runs.map((value) => round(value, 2)), cpuSeconds: side.cpu.map((value) => round(value, 2)) });
    return {
      measured: true,
      voice: voiceId,
      characters: text.length,
      audioSeconds: { voxreel: round(ours.audio, 1), piperTts: round(theirs.audio, 1) },
      voxreel: speed(ours),
      piperTts: speed(theirs),
      ratio: { p50: round(median(ratios), 3), runs: ratios.map((value) => round(value, 3)) },
      firstAudio: { text: short, voxreel: timings(ours.first), piperTts: timings(theirs.first) },
      memory: { voxreelHostsMb: Math.round(hostsMb), voxreelHosts: pids.length, piperTtsMb: Math.round(pythonMb) },
    };
  } catch (error) {
    return { measured: false, reason: error instanceof Error ? error.message : String(error) };
  } finally {
    tts?.close();
    await engine?.close();
  }
}

function round1(value: number | undefined): number {
  return round(value ?? Number.NaN, 1);
}

export function describeComparison(result: PiperComparison): string {
  if (!result.measured) return `Piper against piper-tts not measured: ${result.reason}`;
  const { voxreel, piperTts, ratio, firstAudio, memory, audioSeconds, characters } = result;
  return [
    `Piper (${result.voice}), ${characters} characters: voxreel ${audioSeconds.voxreel} s of audio at ${voxreel.p50}× real time (runs ${voxreel.runs.join(', ')}), ` +
      `piper-tts ${audioSeconds.piperTts} s at ${piperTts.p50}× (runs ${piperTts.runs.join(', ')})`,
    `  voxreel / piper-tts: ${ratio.p50}× (median of the rounds' ratios: ${ratio.runs.join(', ')}; ratio of the medians ${round(voxreel.p50 / piperTts.p50, 3)})`,
    `  first audio of "${firstAudio.text}": voxreel ${firstAudio.voxreel.p50} ms p50 (${firstAudio.voxreel.min}–${firstAudio.voxreel.max}), ` +
      `piper-tts ${firstAudio.piperTts.p50} ms (${firstAudio.piperTts.min}–${firstAudio.piperTts.max})`,
    `  resident memory: voxreel's Piper host${memory.voxreelHosts === 1 ? '' : `s (${memory.voxreelHosts})`} ${memory.voxreelHostsMb} MB, piper-tts ${memory.piperTtsMb} MB`,
  ].join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { runs: { type: 'string' }, python: { type: 'string' }, 'first-runs': { type: 'string' }, install: { type: 'boolean' } } });
  if (values.install && !values.python) await installPiperTts();
  const result = await comparePiper({
    ...(values.runs ? { runs: Number(values.runs) } : {}),
    ...(values['first-runs'] ? { firstRuns: Number(values['first-runs']) } : {}),
    ...(values.python ? { python: values.python } : {}),
  });
  console.log(describeComparison(result));
  process.exitCode = result.measured ? 0 : 1;
}
