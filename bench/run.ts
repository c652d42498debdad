/**
 * The benchmark: `npm run bench` measures the service as a real process over loopback, beside the raw pipelines
 * it wraps, and writes BENCHMARKS.json, BENCHMARKS.md and README's "Performance" section from that one run.
 *
 *   npm run bench                      full run (about 40 to 50 minutes), writes the results
 *   npm run bench -- --quick           smoke run (two to three minutes), prints the results, writes nothing
 *   npm run bench -- --only video,speech   some sections only, prints them, writes nothing
 *   npm run bench -- --quick --out f.json  also writes the results as JSON to f.json
 *   npm run bench -- --only long-form --merge   measures those sections again and puts them into the committed
 *                                               results (the rest as measured before; the report says which, when)
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { measureFirstMinute } from './first-minute.js';
import { measureMemory, type MemoryResult } from './memory-pass.js';
import { peaksByKind } from './memory.js';
import { machineFacts, sourceFingerprint } from './machine.js';
import { RawPipeline } from './raw.js';
import { publish } from './report.js';
import { measureScale } from './scale.js';
import { postOk, procStatusKb, startService, type Service } from './service.js';
import { measureSpeech } from './speech.js';
import { linearFit, round } from './stats.js';
import { evaluateTargets } from './targets.js';
import type { Results } from './results.js';
import { textOf } from './texts.js';
import { profileStarts } from './start-profile.js';
import { measureSpawnCost, measureThroughput } from './throughput.js';
import { measureProcessStart, measureTts, type TtsRow } from './tts.js';
import { LANDSCAPE, PORTRAIT, measureVideo, type VideoRow } from './video.js';
import { measureLongForm } from './long-form.js';
import { measureLooks } from './looks.js';
import { measureMoving } from './moving.js';
import { compareWyoming, installWyomingPiper, type WyomingComparison } from './wyoming-compare.js';
import { measureVoices } from './voices.js';
import { WORST_CASE_VOICES, WORST_INPUTS, measureWorstCases } from './worst-case.js';

const VOICE = 'espeak-ng:en-us';
const SECTIONS = ['first-minute', 'start-profile', 'tts', 'throughput', 'video', 'looks', 'moving', 'speech', 'wyoming', 'worst-case', 'voices', 'scale', 'memory', 'long-form'] as const;
type Section = (typeof SECTIONS)[number];

const PLANS = {
  full: {
    ttsSizes: [200, 500, 1000, 2000, 5000].map((characters) => ({ characters, runs: characters === 200 ? 15 : 5 })),
    throughput: { levels: [1, 2, 4, 8], seconds: 15, rounds: 3 },
    video: { runs: 3, seconds: 60, cases: [PORTRAIT, LANDSCAPE], scalingSeconds: [15, 30, 120] },
    looks: { runs: 5, seconds: 60 },
    moving: { runs: 3, seconds: 60 },
    wyoming: { runs: 5, seconds: 30 },
    // OpenAI's names map to Kokoro's packs where installed (about 2× real time here): one of them is enough.
    speech: { voices: [VOICE, 'alloy'], runs: 3 },
    worstCase: { runs: 3, voices: WORST_CASE_VOICES, inputs: WORST_INPUTS.map((input) => input.id) },
    voices: { runs: 3, seconds: 60, videoSeconds: 60 },
    scale: { levels: [1, 2, 4], rounds: 3, ttsSeconds: 4, videosPerWorker: 2, videoSeconds: 60, latencyRuns: 40 },
    memory: { ttsCharacters: [200, 5000], otherEngineCharacters: 1000, videoSeconds: 60, cases: [PORTRAIT, LANDSCAPE], naive: true },
    firstMinute: { startRuns: 5, voices: ['kokoro:af_heart', 'piper:en_US-joe-medium', 'espeak-ng:en-us', 'flite:slt', 'festival:slt-hts', 'rhvoice:slt'], pathRuns: 15, pathVoice: VOICE },
    processStartRuns: 10,
    startProfileRuns: 3,
    spawnBallastMb: [0, 200, 500],
    warmUpRounds: 3,
    // 100,000 characters with Piper (about 110 minutes of audio), twice, and a 15-minute video: issue 40.
    longForm: { characters: 100_000, videoCharacters: 18_500, killAt: 0.4 },
    // Kokoro's sections (issue 37) made the full run longer than 40 minutes, the long-form section some 20 more.
    deadlineMinutes: 80,
  },
  quick: {
    ttsSizes: [{ characters: 200, runs: 2 }],
    throughput: { levels: [1, 2, 4, 8], seconds: 1, rounds: 1 },
    video: { runs: 1, seconds: 15, cases: [PORTRAIT], scalingSeconds: [] },
    looks: { runs: 1, seconds: 60 },
    moving: { runs: 1, seconds: 60 },
    wyoming: { runs: 1, seconds: 30 },
    speech: { voices: [VOICE], runs: 1 },
    // One slowest valid input, one run: a 200 on eSpeak NG, a 422 on Flite.
    worstCase: { runs: 1, voices: [VOICE, 'flite:slt'], inputs: ['one-word-sentences'] },
    // One run of each; the minute of narration as in the full run, so the neural voice's targets are judged.
    voices: { runs: 1, seconds: 60, videoSeconds: 60 },
    // One round of one and two workers, a short video each.
    scale: { levels: [1, 2], rounds: 1, ttsSeconds: 2, videosPerWorker: 1, videoSeconds: 15, latencyRuns: 10 },
    memory: { ttsCharacters: [200], otherEngineCharacters: 200, videoSeconds: 15, cases: [PORTRAIT], naive: false },
    firstMinute: { startRuns: 1, voices: ['piper:en_US-joe-medium'], pathRuns: 3, pathVoice: VOICE },
    processStartRuns: 2,
    startProfileRuns: 1,
    spawnBallastMb: [0, 200],
    warmUpRounds: 1,
    longForm: { characters: 6000, videoCharacters: 6000, killAt: 0.4 },
    deadlineMinutes: 6,
  },
};
type Plan = (typeof PLANS)['full'];


async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { quick: { type: 'boolean', default: false }, only: { type: 'string' }, out: { type: 'string' }, merge: { type: 'boolean', default: false } },
  });
  if (values.merge && (!values.only || values.quick)) throw new Error('--merge puts full runs of the --only sections into the committed results: give --only, not --quick');
  const only = values.only?.split(',').map((name) => name.trim());
  const unknown = only?.filter((name) => !(SECTIONS as readonly string[]).includes(name));
  if (unknown?.length) throw new Error(`unknown section ${unknown.join(', ')}; sections: ${SECTIONS.join(', ')}`);
  const wanted = (section: Section) => !only || only.includes(section);
  const plan: Plan = values.quick ? PLANS.quick : PLANS.full;
  const kind = only ? 'partial' : values.quick ? 'quick' : 'full';
  // Every loop is bounded by count and time; this is the last resort.
  setTimeout(() => {
    console.error(`bench: still running after ${plan.deadlineMinutes} minutes, giving up`);
    process.exit(1);
  }, plan.deadlineMinutes * 60_000).unref();

  // The service runs as users run it, from dist/: built first when src/ has changed since.
  execFileSync(process.execPath, [path.join(import.meta.dirname, '../script/build.mjs'), '--if-stale'], { stdio: 'inherit' });
  const started = Date.now();
  const loadStart = os.loadavg();
  const sourceAtStart = await sourceFingerprint();
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'voxreel-bench-'));
  console.log(`voxreel bench (${kind}), load average ${loadStart.map((load) => load.toFixed(2)).join(' ')}`);
  const [service, raw] = await Promise.all([startService(), RawPipeline.start(os.availableParallelism())]);
  let memory: MemoryResult | null = null;
  const results: Omit<Results, 'machine' | 'seconds' | 'targets' | 'scaling' | 'memory'> = {
    kind,
    voice: VOICE,
    tts: [],
    processStart: null,
    throughput: [],
    spawnCost: [],
    video: [],
    looks: null,
    moving: null,
    wyoming: null,
    speech: null,
    worstCases: [],
    voices: null,
    scale: null,
    firstMinute: null,
    startProfile: null,
    longForm: null,
  };
  const serverPeakAfterMb: Record<string, number> = {};
  const serverPeakMb = async () => Math.round(((await procStatusKb(service.pid, 'VmHWM')) ?? Number.NaN) / 1024);
  const section = async (name: Section, title: string, measure: () => Promise<void>) => {
    if (!wanted(name)) return;
    const begun = Date.now();
    console.log(title);
    await measure();
    if (name !== 'memory' && name !== 'long-form') serverPeakAfterMb[name] = await serverPeakMb();
    console.log(`  (${((Date.now() - begun) / 1000).toFixed(1)} s)`);
  };
  try {
    // Before the timed server is busy: fresh servers of their own, the machine otherwise quiet.
    await section('first-minute', 'issue 20: the first minute (start, first requests, memory, the short path against the baseline commit, start under load)', async () => {
      results.firstMinute = await measureFirstMinute(plan.firstMinute);
    });
    await section('start-profile', 'issue 35: the start of every process kind, profiled (top self-time entries)', async () => {
      results.startProfile = await profileStarts({ runs: plan.startProfileRuns, log: (line) => console.log(`  ${line}`) });
    });
    await warmUp(service, raw, workDir, plan.warmUpRounds);
    serverPeakAfterMb['start-up and warm-up'] = await serverPeakMb();
    await section('tts', '/tts, service and raw pipeline interleaved', async () => {
      results.tts = await measureTts(service, raw, VOICE, plan.ttsSizes, workDir);
      results.processStart = await measureProcessStart(raw, plan.processStartRuns);
    });
    await section('throughput', `throughput, ${plan.throughput.seconds} s per level in ${plan.throughput.rounds} rounds`, async () => {
      results.throughput = await measureThroughput(service, VOICE, plan.throughput);
      results.spawnCost = await measureSpawnCost(plan.spawnBallastMb);
    });
    await section('video', '/tts-video, service and naive pipeline interleaved', async () => {
      const { runs, seconds, cases, scalingSeconds } = plan.video;
      const items = [
        ...cases.map((videoCase) => ({ videoCase, seconds, naive: true })),
        ...scalingSeconds.map((extra) => ({ videoCase: PORTRAIT, seconds: extra, naive: false })),
      ];
      results.video = await measureVideo(service, raw, { voice: VOICE, items, runs, workDir });
    });
    await section('looks', 'issue 12: keyframes and loudness in the renderer; /tts-video with an image, bold captions and music', async () => {
      results.looks = await measureLooks(service, raw, { voice: VOICE, ...plan.looks, workDir });
    });
    await section('moving', 'issue 24: moving pictures (zoom, pan, progress bar) against a still one, with size and PSNR', async () => {
      results.moving = await measureMoving(raw, { voice: VOICE, ...plan.moving, workDir });
    });
    await section('speech', '/v1/audio/speech, streamed', async () => {
      results.speech = await measureSpeech(service, plan.speech.voices, plan.speech.runs);
    });
    await section('wyoming', "issue 25: voxreel's Wyoming server against wyoming-piper 2.5.2 on the same voice, by the real client", async () => {
      results.wyoming = await installWyomingPiper().then(
        (python) => compareWyoming({ python, ...plan.wyoming }),
        (error: unknown): WyomingComparison => ({ measured: false, reason: `wyoming-piper could not be installed: ${String(error)}` }),
      );
    });
    await section('worst-case', '/tts on the slowest 5000-character inputs, per engine', async () => {
      results.worstCases = await measureWorstCases(service, plan.worstCase);
    });
    await section('voices', 'each engine\'s main English voice: real-time factor, word error rate and DNSMOS; the neural voice streamed and in a video', async () => {
      results.voices = await measureVoices(service, plan.voices, workDir);
    });
    await section('scale', `issue 14: ${plan.scale.levels.join(', ')} \`voxreel worker\` processes on one redis-server; what the queue adds to a job; cache hits`, async () => {
      results.scale = await measureScale(plan.scale, { voice: VOICE, workDir });
    });
    const serverPeak = await serverPeakMb();
    // Engine hosts of the timed server have run the most work: their peaks count too.
    const hosts = peaksByKind(service.pid);
    delete hosts.ffmpeg; // measured apart, exactly, in the memory pass
    await service.stop();
    await section('memory', 'memory pass (a second server, ffmpeg behind GNU time)', async () => {
      const pass = await measureMemory(raw, { voice: VOICE, ...plan.memory, workDir });
      for (const [name, mb] of Object.entries(hosts) as Array<[keyof typeof hosts, number]>) pass.processes[name] = Math.max(pass.processes[name] ?? 0, mb);
      memory = { serverPeakMb: serverPeak, serverPeakAfterMb, ...pass };
    });
    await section('long-form', 'issue 40: long jobs (100,000 characters with Piper by job, a worker killed part way, a 15-minute video), each on fresh processes', async () => {
      results.longForm = await measureLongForm(plan.longForm, (line) => console.log(`  ${line}`));
    });
  } finally {
    await service.stop();
    await raw.close();
    await rm(workDir, { recursive: true, force: true });
  }

  const machine = await machineFacts(loadStart, sourceAtStart);
  if (machine.sourceChangedDuringRun) console.warn('bench: the service\'s source changed during the run: its results mix two versions; run it again');
  const complete: Results = {
    ...results,
    machine,
    seconds: round((Date.now() - started) / 1000, 1),
    targets: [],
    scaling: scaling(results.tts, results.video),
    memory,
  };
  complete.targets = evaluateTargets(complete);
  for (const target of complete.targets) console.log(`${target.pass ? 'PASS' : 'FAIL'}  ${target.description}: ${target.value} ${target.unit} (target ${target.target})`);
  if (values.out) await writeFile(values.out, `${JSON.stringify(complete, null, 2)}\n`);
  if (kind === 'full') await publish(complete);
  else if (values.merge) await publish(await mergedInto(complete, only as Section[]));
  else console.log(`${kind} run: BENCHMARKS.md, BENCHMARKS.json and README left as they are${values.out ? `; results in ${values.out}` : ''}`);
  console.log(`done in ${complete.seconds} s`);
}

/** The fields of Results each section fills. */
const SECTION_FIELDS: Record<Section, ReadonlyArray<keyof Results>> = {
  'first-minute': ['firstMinute'],
  'start-profile': ['startProfile'],
  tts: ['tts', 'processStart'],
  throughput: ['throughput', 'spawnCost'],
  video: ['video'],
  looks: ['looks'],
  moving: ['moving'],
  speech: ['speech'],
  wyoming: ['wyoming'],
  'worst-case': ['worstCases'],
  voices: ['voices'],
  scale: ['scale'],
  memory: ['memory'],
  'long-form': ['longForm'],
};

/** The committed results (BENCHMARKS.json) with `sections` taken from this run, and the run said in `remeasured`. */
async function mergedInto(run: Results, sections: readonly Section[]): Promise<Results> {
  const committed = JSON.parse(await readFile(path.join(import.meta.dirname, '../BENCHMARKS.json'), 'utf8')) as Results;
  const merged: Results = { ...committed };
  for (const field of sections.flatMap((section) => SECTION_FIELDS[section])) Object.assign(merged, { [field]: run[field] });
  merged.scaling = scaling(merged.tts, merged.video);
  const { date, commit, uncommittedChanges, loadAverage } = run.machine;
  merged.remeasured = [...(committed.remeasured ?? []), { sections: [...sections], date, commit, uncommittedChanges, loadAverage, seconds: run.seconds }];
  merged.targets = evaluateTargets(merged);
  return merged;
}

/** One of each request on both sides, so that no timed run pays for first-use compilation or cold caches. */
async function warmUp(service: Service, raw: RawPipeline, workDir: string, rounds: number): Promise<void> {
  for (let round = 0; round < rounds; round += 1) {
    await postOk(`${service.baseUrl}/tts`, { text: textOf(200), voice: VOICE });
    await raw.mp3(textOf(200), VOICE, path.join(workDir, 'warm.mp3'));
  }
  for (const frameRate of ['constant', 'variable']) {
    await postOk(`${service.baseUrl}/tts-video`, { text: textOf(100), voice: VOICE, resolution: '720p', frame_rate: frameRate });
  }
}

function scaling(tts: readonly TtsRow[], video: readonly VideoRow[]): Results['scaling'] {
  const ttsPoints = tts.filter((row) => row.characters >= 500).map((row) => ({ x: row.characters, y: row.service.p50 }));
  const portrait = video.filter((row) => row.case === PORTRAIT.label).sort((a, b) => a.duration - b.duration);
  const videoFit = (frameRate: 'constant' | 'variable') => linearFit(portrait.map((row) => ({ x: row.duration, y: row.service[frameRate].p50 })));
  return {
    tts: ttsPoints.length >= 3 ? linearFit(ttsPoints) : null,
    video: portrait.length >= 3 ? { constant: videoFit('constant'), variable: videoFit('variable') } : null,
  };
}

await main();
