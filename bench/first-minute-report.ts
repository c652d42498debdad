import { BASELINE_COMMIT, type FirstMinuteResult } from './first-minute.js';
import { mb, spread, table, time } from './markdown.js';

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
        ['process start to `/readyz` 200 (start-up voice warm)', spread(result.readyMs), result.readyMs.runs.length],
      ],
    ),
    '',
    'First request after `/readyz` said ready, per engine (a fresh server each, `/tts` 200 characters, wav), against the median of the next three:',
    '',
    table(
      ['voice', 'first', 'next', 'first / next'],
      result.firstRequests.map((row) => [row.voice, time(row.firstMs), time(row.warmMs), `${row.ratio}×`]),
    ),
    '',
    `Resident memory at rest after four requests to the start-up voice: **${mb(result.idle.treeMb)}** for the whole process tree ` +
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
    ...(result.piper.measured
      ? [
          `Piper against PyPI's piper-tts 1.8 (one Python process, voice loaded first) on \`${result.piper.voice}\`, the same ` +
            `${result.piper.characters}-character narration, two sentences in flight, sides alternated: voxreel at ` +
            `**${result.piper.ratio.p50}×** piper-tts's speed (runs ${result.piper.ratio.runs.join(', ')}); first audio of a short ` +
            `sentence ${time(result.piper.firstAudio.voxreel.p50)} (piper-tts ${time(result.piper.firstAudio.piperTts.p50)}); resident ` +
            `memory after the runs: voxreel's Piper process ${mb(result.piper.memory.voxreelHostsMb)}, piper-tts ${mb(result.piper.memory.piperTtsMb)}.`,
          '',
        ]
      : [`Piper against piper-tts: not measured (${result.piper.reason}).`, '']),
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
