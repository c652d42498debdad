import { BASELINE_COMMIT, type FirstMinuteResult } from './first-minute.js';
import { mb, spread, table, time } from './markdown.js';
import type { PiperComparison } from './piper-compare.js';
import { RUNTIME_LABELS } from './runtimes.js';

/** BENCHMARKS.md's section on the first minute (issue 20). */
export function firstMinuteSection(result: FirstMinuteResult | null): string[] {
  if (!result) return [];
  return [
    '## The first minute: start, first requests, memory, the short path',
    '',
    'The compiled build (`npm start`: `bin/voxreel serve` running `dist/`), started as shipped but for the caches ' +
      `(off). Start-up voice: \`${result.warmVoice ?? 'none'}\`.`,
    '',
    table(
      ['', 'p50 (min–max)', 'runs'],
      [
        ['process start to listening ("voxreel ready")', spread(result.listeningMs), result.listeningMs.runs.length],
        [`process start to \`/readyz\` 200 (start-up voice warm), ${RUNTIME_LABELS.pypi}`, spread(result.readyByRuntime.pypi), result.readyByRuntime.pypi.runs.length],
        [`the same, ${RUNTIME_LABELS.npm}`, spread(result.readyByRuntime.npm), result.readyByRuntime.npm.runs.length],
      ],
    ),
    '',
    `The two runtimes' starts interleaved; \`/readyz\` named \`onnxruntime\` ${result.runtimeNamed.pypi ?? 'nothing'} and ${result.runtimeNamed.npm ?? 'nothing'}. ` +
      `The whole tree at rest after four requests to the start-up voice, in each start on 1.32: ${result.idleTreeMb.map(mb).join(', ')}.`,
    '',
    'First request after `/readyz` said ready, per engine (a fresh server each, `/tts` 200 characters, wav), against the median of the next three:',
    '',
    table(
      ['voice', 'first', 'next', 'first / next'],
      result.firstRequests.map((row) => [row.voice, time(row.firstMs), time(row.warmMs), `${row.ratio}×`]),
    ),
    '',
    `Resident memory at rest after four requests to the start-up voice, the largest of those starts: **${mb(result.idle.treeMb)}** for the whole process tree ` +
      `(${result.idle.processes.map((process) => `${process.kind} ${mb(process.rssMb)}`).join(', ')}). ` +
      `Peaks (VmHWM) per kind over the first requests above: ${Object.entries(result.peakMb).map(([kind, value]) => `${kind} ${mb(value)}`).join(', ')}.`,
    '',
    `Against commit ${BASELINE_COMMIT} (before the first-minute work, run from a checkout beside this one, from source as it ran then), ` +
      'interleaved request by request on the same machine, eSpeak NG:',
    '',
    table(
      ['request', 'now p50 (min–max)', `${BASELINE_COMMIT} p50 (min–max)`, 'now / then'],
      result.paths.map((row) => [row.label, spread(row.current), spread(row.baseline), `${row.ratio}×`]),
    ),
    '',
    `Two APIs and two workers (Redis) started at once while a busy loop runs on every core: ${result.underLoad.ready} of ` +
      `${result.underLoad.of} ready (start-up voice warm) in ${result.underLoad.seconds} s.`,
    '',
    ...piperLines(result),
    ...(result.docker.measured
      ? [
          `The Docker image (this Dockerfile, built here on the offline stand-in base images of ../shared/tools/docker-local.sh, ` +
            `in ${result.docker.buildSeconds} s): **${mb(result.docker.sizeMb)}**; it runs the compiled build (\`bin/voxreel serve\`). ` +
            `From \`docker run\` to listening ${spread(result.docker.listeningMs)}, to \`/readyz\` 200 ${spread(result.docker.readyMs)} ` +
            `(start-up voice \`${result.docker.warmVoice ?? 'none'}\`, ${result.docker.readyMs.runs.length} runs).`,
          '',
        ]
      : [`The Docker image: not measured (${result.docker.reason}).`, '']),
  ];
}

function inFlight(result: PiperComparison, label: string): string[] {
  if (!result.measured) return [`Piper against piper-tts on ${label}: not measured (${result.reason}).`, ''];
  return [
    `Two sentences in flight on each side (voxreel's engine as its synthesizer feeds it; piper-tts through a pool of two threads), ` +
      `\`${result.voice}\`, the same ${result.characters}-character narration, sides alternated, voxreel on ${label}: ` +
      `**${result.ratio.p50}×** piper-tts's speed (runs ${result.ratio.runs.join(', ')}; voxreel ${result.voxreel.p50}× real time, piper-tts ${result.piperTts.p50}×); ` +
      `first audio of a short sentence ${time(result.firstAudio.voxreel.p50)} (piper-tts ${time(result.firstAudio.piperTts.p50)}); resident ` +
      `memory after the runs: voxreel's Piper process ${mb(result.memory.voxreelHostsMb)}, piper-tts ${mb(result.memory.piperTtsMb)}.`,
    '',
  ];
}

/** Piper against PyPI's piper-tts 1.8 (one Python process, voice loaded first, on PyPI's ONNX Runtime 1.32), both ways. */
function piperLines(result: FirstMinuteResult): string[] {
  const user = result.piperAsUser;
  return [
    ...(user.measured
      ? [
          `Piper as a user runs it: \`/tts\` (wav, ${user.characters} characters, the service warm, caches off) against piper-tts's ` +
            `\`PiperVoice.synthesize_wav\` on the same model and text, sides alternated: voxreel on ${RUNTIME_LABELS.pypi} ` +
            `**${user.ratio.pypi.p50}×** piper-tts's speed (runs ${user.ratio.pypi.runs.join(', ')}), on ${RUNTIME_LABELS.npm} ${user.ratio.npm.p50}× ` +
            `(× real time: ${user.speed.pypi}, ${user.speed.npm}, piper-tts ${user.speed.piperTts}).`,
          '',
        ]
      : [`Piper as a user runs it: not measured (${user.reason}).`, '']),
    ...inFlight(result.piper, RUNTIME_LABELS.pypi),
    ...inFlight(result.piperNpm, `${RUNTIME_LABELS.npm} (one round)`),
  ];
}
