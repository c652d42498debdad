import { EnvSchema } from '../src/config.js';
import type { Results, TargetResult } from './results.js';
import type { MovingResult } from './moving.js';
import type { ScaleResult } from './scale.js';
import { round } from './stats.js';
import { PORTRAIT } from './video.js';
import { KOKORO_VOICE, NEURAL_VOICE, type VoicesResult } from './voices.js';
import { answersOf, slowestOf } from './worst-case.js';

/** Half of the service's default TTS_TIMEOUT_MS: the margin a worst case must leave on this machine. */
const WORST_CASE_MS = EnvSchema.properties.TTS_TIMEOUT_MS.default / 2;

/** The issues' targets, each judged on the measured p50 (or the p99 or slowest run where it says so); only those this run measured. */
export function evaluateTargets(results: Pick<Results, 'tts' | 'throughput' | 'video' | 'worstCases' | 'voices' | 'looks' | 'scale' | 'firstMinute' | 'moving' | 'wyoming' | 'longForm'>): TargetResult[] {
  const targets: TargetResult[] = [];
  const add = (id: string, description: string, value: number, unit: string, limit: number, target: string, compare: 'at most' | 'below' | 'at least' = 'at most') => {
    const pass = compare === 'below' ? value < limit : compare === 'at least' ? value >= limit : value <= limit;
    const result = { id, description, target, value, unit, pass };
    targets.push(result);
    return result;
  };
  const first = results.firstMinute;
  if (first) {
    add('first-ready', 'start to /readyz 200 (compiled, start-up voice warm), p50', first.readyMs.p50, 'ms', 2000, '≤ 2000 ms');
    const neural = first.firstRequests.find((row) => row.voice === first.warmVoice);
    if (neural) add('first-request-warm-voice', `first request to the start-up voice after ready / a warm one`, neural.ratio, '×', 1.5, '≤ 1.5');
    if (first.idleTreeMb.length > 0) {
      const most = Math.max(...first.idleTreeMb);
      add('idle-tree-memory', `resident memory of one instance at rest (whole tree, start-up voice loaded), largest of ${first.idleTreeMb.length} starts`, most, 'MB', 450, '≤ 450 MB in each start');
    }
    const mp3 = first.paths.find((row) => row.label.startsWith('/tts 200 characters, mp3'));
    if (mp3) add('short-mp3-vs-baseline', '/tts 200 characters mp3, p50 now / before (same run)', mp3.ratio, '×', 0.5, '≤ 0.5');
    for (const row of first.paths.filter((path) => path.label.startsWith('/tts 5000') || path.label.startsWith('/tts-video'))) {
      const kind = row.label.startsWith('/tts-video') ? (row.label.includes('music') ? 'video-looks' : 'video') : 'tts-5000';
      add(`no-slower-${kind}`, `${row.label}, p50 now / before (same run)`, row.ratio, '×', 1.1, '≤ 1.1 (no slower, within noise)');
    }
    add('start-under-load', 'processes ready of 4 started at once under a CPU hog', first.underLoad.ready, 'of 4', 4, '4', 'at least');
    if (first.piperAsUser.measured) {
      add('piper-as-user', "Piper speed / piper-tts's as a user runs each (/tts wav against synthesize_wav, 730 characters)", first.piperAsUser.ratio.pypi.p50, '×', 1.15, '≥ 1.15', 'at least');
    }
    if (first.piper.measured) {
      add('piper-in-flight', "Piper speed / piper-tts's, two sentences in flight on each side", first.piper.ratio.p50, '×', 1, '≥ 1.0', 'at least');
      add('piper-first-audio', 'Piper first audio of a short sentence, p50', first.piper.firstAudio.voxreel.p50, 'ms', 100, '≤ 100 ms');
    }
  }
  const wyoming = results.wyoming;
  if (wyoming?.measured) {
    for (const row of wyoming.rows) {
      const [ours, theirs] = [row.voxreel.firstMs.p50, row.wyomingPiper.firstMs.p50];
      add(`wyoming-first-${row.text}`, `Wyoming first audio-chunk, ${row.text} text, p50 voxreel / wyoming-piper 2.5.2 (${ours} against ${theirs} ms)`, round(ours / theirs, 2), '×', 1, '≤ 1');
    }
  }
  const tts = (characters: number) => results.tts.find((row) => row.characters === characters);
  const short = tts(200);
  const long = tts(5000);
  if (short) add('tts-200-p50', '/tts 200 characters, p50', short.service.p50, 'ms', 150, '≤ 150 ms');
  if (long) add('tts-5000-p50', '/tts 5000 characters, p50', long.service.p50, 'ms', 1500, '≤ 1500 ms');
  for (const row of [short, long]) {
    if (row) add(`tts-${row.characters}-ratio`, `/tts ${row.characters} characters, service / raw pipeline`, row.ratio, '×', 1.15, '≤ 1.15');
  }
  for (const row of results.throughput) {
    add(`event-loop-c${row.concurrency}`, `server event-loop delay p99 at concurrency ${row.concurrency}`, row.eventLoopP99Ms, 'ms', 50, '< 50 ms', 'below');
  }
  // The video targets are for a minute of narration; a quick run's shorter video is not judged.
  const portrait = results.video.find((row) => row.case === PORTRAIT.label && row.plannedSeconds === 60);
  if (portrait) {
    add('video-constant', `/tts-video ${PORTRAIT.label}, ${portrait.duration.toFixed(1)} s, constant rate, p50`, portrait.service.constant.p50, 'ms', 3000, '≤ 3000 ms');
    add('video-variable', `/tts-video ${PORTRAIT.label}, ${portrait.duration.toFixed(1)} s, variable rate, p50`, portrait.service.variable.p50, 'ms', 1000, '≤ 1000 ms');
  }
  for (const voice of new Set(results.worstCases.map((row) => row.voice))) {
    for (const [kind, what] of [['slow', 'worst valid 5000 characters'], ['long', 'very long audio from 5000 characters']] as const) {
      const rows = results.worstCases.filter((row) => row.voice === voice && row.kind === kind);
      const slowest = slowestOf(rows);
      if (!slowest) continue;
      const wrong = rows.filter((row) => !row.asExpected);
      const otherWrong = wrong.filter((row) => row !== slowest).map((row) => `${row.label} → ${answersOf(row)}`);
      const description = `/tts ${what}, ${voice}: ${slowest.label} → ${answersOf(slowest)}, slowest run${otherWrong.length ? `; also ${otherWrong.join(', ')}` : ''}`;
      const target = add(`worst-${kind}-${voice}`, description, slowest.time.max, 'ms', WORST_CASE_MS, `200 or 422 OUTPUT_TOO_LONG, ≤ ${WORST_CASE_MS} ms`);
      target.pass &&= wrong.length === 0;
    }
  }
  addNeuralTargets(results.voices, add);
  const looks = results.looks;
  if (looks) {
    add('video-keyframes-cost', `render of ${looks.seconds} s at 1080×1920 with a keyframe every 2 s / with one keyframe, p50s`, looks.keyframeCost, '×', 1.15, '≤ 1.15');
    add('video-looks', `/tts-video 1080×1920, ${looks.seconds} s, image background + bold captions + music, p50`, looks.service.looks.p50, 'ms', 1500, '≤ 1500 ms');
    // Issue 21: a Chinese minute (more words, cut by Intl.Segmenter) in about the time of an English one.
    add('video-chinese', `/tts-video 1080×1920, ${looks.chineseSeconds} s of Chinese / ${looks.seconds} s of English, p50s per second of video`, looks.chineseRatio, '×', 1.15, '≤ 1.15');
  }
  addScaleTargets(results.scale, add);
  addMovingTargets(results.moving, add);
  addLongFormTargets(results.longForm, add);
  return targets;
}

/** Issue 40: a long job with Piper at 5× real time or more, its tree within 200 MB of rest, its progress never falling; a takeover that changes no byte. */
function addLongFormTargets(longForm: Results['longForm'], add: AddTarget): void {
  if (!longForm) return;
  const { audio, takeover, video } = longForm;
  const job = `long /tts job, ${audio.characters} characters, ${longForm.voice}`;
  add('long-form-real-time', `${job}: audio seconds per wall second, submitted to succeeded`, audio.realTime, '×', 5, '≥ 5×', 'at least');
  add('long-form-memory', `${job}: resident memory of the whole tree above rest, largest`, audio.memory.aboveRestMb, 'MB', 200, '≤ 200 MB');
  add('long-form-progress', `${job}: polls whose charactersDone and progress fell below the poll before (of ${audio.polls})`, audio.progressMonotonic ? 0 : 1, '', 0, '0');
  if (video.chapters !== undefined) {
    add('long-form-chapter-cards', `long /tts-video job, ${video.width}×${video.height}, ${Math.round(video.videoSeconds / 60)} min: chapters whose card and captions a decoded frame does not show (of ${video.chapters})`, video.chapters - Math.min(video.cardsSeen ?? 0, video.captionsSeen ?? 0), '', 0, '0');
  }
  if (takeover.measured) {
    add('long-form-takeover', `${job}, its worker killed at ${Math.round(takeover.killedAt * 100)} % and the job finished by another: files differing from the uninterrupted run's`, takeover.identical ? 0 : 1, '', 0, '0');
  }
}

/** Records one target (evaluateTargets' `add`). */
type AddTarget = (id: string, description: string, value: number, unit: string, limit: number, target: string, compare?: 'at least') => unknown;

/** Issue 24's: a moving picture in at most a quarter of real time at 38 dB or better; four still scenes and a title within 1.5× one still. */
const MOVING_REAL_TIME = 0.25;
const MOVING_PSNR = 38;
const SCENES_RATIO = 1.5;

function addMovingTargets(
  moving: MovingResult | null,
  add: AddTarget,
): void {
  if (!moving) return;
  for (const row of moving.rows.filter((entry) => entry.renderPath === 'moving')) {
    const name = `renderVideo 1080×1920, ${moving.seconds} s, ${row.label}`;
    add(`moving-time-${row.label}`, `${name}, p50 / the video's length`, row.realTime, '×', MOVING_REAL_TIME, `≤ ${MOVING_REAL_TIME}`);
    if (row.psnr !== null) add(`moving-psnr-${row.label}`, `${name}, PSNR against x264 slow CRF 12`, row.psnr, 'dB', MOVING_PSNR, `≥ ${MOVING_PSNR} dB`, 'at least');
  }
  add('scenes-ratio', `renderVideo 1080×1920, ${moving.seconds} s, pop captions: four still scenes (cuts) and a title / one still image, p50s`, moving.scenesRatio, '×', SCENES_RATIO, `≤ ${SCENES_RATIO}`);
}

/**
 * Issue 14's: a cache hit answers at once wherever the cache lives; the trip through Redis costs a short job little
 * (3 to 11 ms at p50 on this machine, busy or not: the bound leaves room for that noise, not for a polling delay);
 * a second worker on a second core nearly doubles short jobs (×1.56 to ×1.69 measured, ×1.1 only while other work
 * took the second core; one worker keeps one core busy): at least ×1.4, or the workers are not working side by side.
 */
const QUEUE_OVERHEAD_MS = 25;
const TWO_WORKER_SPEED_UP = 1.4;

function addScaleTargets(
  scale: ScaleResult | null,
  add: AddTarget,
): void {
  if (!scale) return;
  const two = scale.levels.find((level) => level.workers === 2);
  if (two && scale.levels[0]?.workers === 1 && scale.cores >= 2) {
    add('scale-two-workers', 'one-sentence /tts jobs per second, 2 workers over 1 (one job at a time each)', two.tts.speedUp, '×', TWO_WORKER_SPEED_UP, `≥ ${TWO_WORKER_SPEED_UP}×`, 'at least');
  }
  add('cache-hit-embedded', '/tts answered from the request cache in the API process, p50', scale.cacheHit.embedded.p50, 'ms', 5, '≤ 5 ms');
  add('cache-hit-redis', '/tts answered from the request cache in Redis, p50', scale.cacheHit.redis.p50, 'ms', 5, '≤ 5 ms');
  add('queue-overhead', 'one-sentence /tts through Redis and one worker, minus the same in one process, p50', scale.queue.p50DifferenceMs, 'ms', QUEUE_OVERHEAD_MS, `≤ ${QUEUE_OVERHEAD_MS} ms`);
}

/** Issue 11's targets for the neural voice, where this run measured it. */
function addNeuralTargets(
  voices: VoicesResult | null,
  add: AddTarget,
): void {
  const rate = voices?.realTime.find((row) => row.voice === NEURAL_VOICE);
  if (rate) add('neural-real-time', `/tts ${NEURAL_VOICE}, ${rate.audioSeconds.toFixed(0)} s of wav, one at a time, real-time factor p50`, rate.one.p50, '×', 5, '≥ 5×', 'at least');
  // Issue 37: Kokoro at least 1.5× real time on a long text, its first streamed audio within 600 ms.
  const kokoro = voices?.realTime.find((row) => row.voice === KOKORO_VOICE);
  if (kokoro) add('kokoro-real-time', `/tts ${KOKORO_VOICE}, ${kokoro.audioSeconds.toFixed(0)} s of wav, one at a time, real-time factor p50`, kokoro.one.p50, '×', 1.5, '≥ 1.5×', 'at least');
  if (voices?.speech?.measured) {
    for (const row of voices.speech.rows) {
      if (row.voice === KOKORO_VOICE) add(`kokoro-first-byte-${row.format}`, `/v1/audio/speech ${row.voice} ${row.format}, first byte p50`, row.firstByte.p50, 'ms', 600, '≤ 600 ms');
      else add(`neural-first-byte-${row.format}`, `/v1/audio/speech ${row.voice} ${row.format}, first byte p50`, row.firstByte.p50, 'ms', 1000, '≤ 1000 ms');
    }
  }
  // As for the other videos, a minute of narration only.
  const video = voices?.video;
  if (video?.plannedSeconds === 60) {
    add('neural-video', `/tts-video ${video.case} ${video.voice}, ${video.duration.toFixed(1)} s, constant rate, p50`, video.time.p50, 'ms', 10_000, '≤ 10000 ms');
  }
}

