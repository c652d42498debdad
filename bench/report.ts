import { firstMinuteSection } from './first-minute-report.js';
import { startProfileTable } from './start-profile.js';
import { mb, spread, table, time } from './markdown.js';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EnvSchema } from '../src/config.js';
import type { MemoryJob } from './memory-pass.js';
import type { Results } from './results.js';
import type { Latency, ScaleRate, ScaleResult } from './scale.js';
import type { SpeechRow } from './speech.js';
import type { LinearFit } from './stats.js';
import { PORTRAIT } from './video.js';
import { NEURAL_VOICE } from './voices.js';
import { answersOf, slowestOf, type WorstCaseRow } from './worst-case.js';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const NOTES = /<!-- notes:start -->\n([\s\S]*?)<!-- notes:end -->/;
const README_SECTION = /(<!-- bench:performance:start -->\n)[\s\S]*?(<!-- bench:performance:end -->)/;

/** Writes BENCHMARKS.json, BENCHMARKS.md (keeping its hand-written notes) and README's Performance section. */
export async function publish(results: Results): Promise<void> {
  const markdownFile = path.join(ROOT, 'BENCHMARKS.md');
  const previous = await readFile(markdownFile, 'utf8').catch(() => '');
  const notes = NOTES.exec(previous)?.[1] ?? 'None yet.\n';
  await writeFile(path.join(ROOT, 'BENCHMARKS.json'), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(markdownFile, benchmarksMarkdown(results, notes));
  const readmeFile = path.join(ROOT, 'README.md');
  const readme = await readFile(readmeFile, 'utf8');
  if (README_SECTION.test(readme)) {
    await writeFile(readmeFile, readme.replace(README_SECTION, (_all, start: string, end: string) => `${start}${readmeSection(results)}${end}`));
  } else {
    console.warn('README.md has no <!-- bench:performance:start/end --> markers: its Performance section was not updated');
  }
  console.log('wrote BENCHMARKS.json, BENCHMARKS.md and README.md (Performance)');
}

export function benchmarksMarkdown(results: Results, notes: string): string {
  const { machine } = results;
  const busy = Math.max(...machine.loadAverage.start, ...machine.loadAverage.end) > machine.cpus;
  return [
    '# Benchmarks',
    '',
    '<!-- Written by `npm run bench` (bench/report.ts) with BENCHMARKS.json; only the notes block at the end is edited by hand. -->',
    '',
    `Measured by \`npm run bench\` on ${machine.date.slice(0, 16).replace('T', ' ')} UTC: ${machine.cpus} cores (${machine.cpuModel}), ` +
      `${machine.memoryGiB} GiB, ${machine.kernel}, Node ${machine.node}, ${machine.ffmpeg}. Commit ${machine.commit}` +
      `${machine.uncommittedChanges ? ' with uncommitted changes in the working tree' : ''}. The run took ${Math.round(results.seconds)} s.` +
      (machine.sourceChangedDuringRun ? ' **The service\'s source changed during the run: these results mix two versions.**' : ''),
    '',
    `Load average (1, 5, 15 min): ${machine.loadAverage.start.join(', ')} at the start, ${machine.loadAverage.end.join(', ')} at the end` +
      (busy
        ? ` — more than the ${machine.cpus} cores: other work shared the machine, so these figures are slower than an idle machine's. ` +
          'Medians and interleaved runs keep the comparisons fair; the absolute times carry the noise.'
        : '.'),
    '',
    'The service runs as a real process, as `npm start` does (`bin/voxreel serve`: the compiled build in `dist/`), with its defaults ' +
      '(`CONCURRENCY` = cores, `LOG_LEVEL=info`) except a temporary `OUTPUT_DIR`, `RATE_LIMIT_MAX=0` and no per-client caps ' +
      '(`CLIENT_MAX_JOBS=0`, `CLIENT_CHARACTERS_PER_WINDOW=0`: the benchmark is one client standing in for many) and the ' +
      'request and sentence caches off (`CACHE_MAX_ENTRIES=0`, `SENTENCE_CACHE_MB=0`: the sections repeat identical requests, ' +
      'which the caches would answer without doing the work; the scale-out section measures cache hits apart), on a free ' +
      `loopback port; the benchmark talks to it with \`fetch\` (undici, keep-alive). Voice: \`${results.voice}\` unless a table names others. ` +
      'Times are end to end (request sent to answer read), medians (p50) of the runs stated, with the fastest and slowest beside.',
    '',
    ...remeasuredLines(results),
    '## Targets',
    '',
    table(
      ['', 'measured', 'target', ''],
      results.targets.map((target) => [target.description, `${target.value} ${target.unit}`, target.target, target.pass ? '**PASS**' : '**FAIL**']),
    ),
    '',
    ...firstMinuteSection(results.firstMinute),
    ...startProfileSection(results),
    ...ttsSection(results),
    ...worstCaseSection(results),
    ...throughputSection(results),
    ...scaleSection(results),
    ...videoSection(results),
    ...looksSection(results),
    ...movingSection(results),
    ...wyomingSection(results),
    ...memorySection(results),
    ...scalingSection(results),
    ...speechSection(results),
    ...voicesSection(results),
    ...longFormSection(results),
    '## Notes',
    '',
    '<!-- notes:start -->',
    notes.trimEnd(),
    '<!-- notes:end -->',
    '',
  ].join('\n');
}

function ttsSection(results: Results): string[] {
  const rows = results.tts.filter((row) => row.characters === 200 || row.characters === 5000);
  if (rows.length === 0) return [];
  return [
    '## `/tts`: service against the raw pipeline',
    '',
    table(
      ['characters', 'audio', 'service p50 (min–max)', 'raw pipeline p50 (min–max)', 'service / raw', 'runs'],
      rows.map((row) => [row.characters, `${row.audioSeconds.toFixed(1)} s`, spread(row.service), spread(row.raw), `${row.ratio.toFixed(2)}×`, row.service.runs.length]),
    ),
    '',
    'Where the time goes (p50 of each phase of the raw runs; the service\'s own share is the difference):',
    '',
    table(
      ['characters', 'engine (sentences, 2 at a time)', 'ffmpeg → mp3', 'service − raw'],
      rows.map((row) => [row.characters, time(row.rawPhases.synthesisMs), time(row.rawPhases.encodeMs), time(row.service.p50 - row.raw.p50)]),
    ),
    '',
    ...(results.processStart
      ? [
          `Starting the programs alone (p50 of ${results.processStart.runs} \`-version\` runs): ffmpeg ${time(results.processStart.ffmpegMs)}, ` +
            `ffprobe ${time(results.processStart.ffprobeMs)}. Every \`/tts\` request starts one ffmpeg, whatever its length; a video ` +
            'starts three and one ffprobe.',
          '',
        ]
      : []),
    'Service: `POST /tts` with `format: "mp3"`, the answer read whole. Raw pipeline, in the benchmark process: the same ' +
      'engines (`createEngines`, the server\'s pool size), the text normalized and split into sentences as ' +
      'src/synthesis.ts does, spoken two sentences at a time, joined with `joinSpeech`, then one ffmpeg run (spawned ' +
      'directly, PCM on stdin) with src/audio-encoding.ts\'s mp3 settings to a file. Each service run is paired with a raw ' +
      'run on the same text, alternating which goes first.',
    '',
  ];
}

function worstCaseSection(results: Results): string[] {
  const rows = results.worstCases;
  if (rows.length === 0) return [];
  const runs = Math.max(...rows.map((row) => row.time.runs.length));
  const audio = (row: WorstCaseRow) => (row.audioSeconds === null ? '–' : `${row.audioSeconds.toFixed(1)} s`);
  return [
    '## `/tts`: the slowest 5000-character inputs, per engine',
    '',
    table(
      ['voice', 'input', 'answer', 'time p50 (min–max)', 'runs', 'audio'],
      rows.map((row) => [`\`${row.voice}\``, row.label, row.asExpected ? answersOf(row) : `**${answersOf(row)}**`, spread(row.time), row.time.runs.length, audio(row)]),
    ),
    '',
    `Each engine's main English voice (Festival's when \`GET /voices\` lists it), \`POST /tts\` with \`format: "mp3"\`, ` +
      'through the same server as the sections above, the answer read whole. Inputs: "A. " repeated to 4998 characters ' +
      '(one-word sentences); 5000 characters of the prose the other sections speak; the same prose with a run of 318 ' +
      '`.`, one of 368 `,` and `!?;:)` × 80 glued to words in it; then "W" × 5000 and the digits 0–9 × 500, which a voice ' +
      `that reads them out one by one speaks for far longer than \`MAX_AUDIO_SECONDS\` (default ${EnvSchema.properties.MAX_AUDIO_SECONDS.default} s). ` +
      `An input may get a 200 or a 422 \`OUTPUT_TOO_LONG\` (the voice would speak it for longer than that limit); anything ` +
      `else is in bold. Each input was run ${runs === 1 ? 'once' : `up to ${runs} times, in rounds, once only where a run took over 10 s`}; ` +
      'one short request per voice came first. The targets take the slowest run of each group (the three spoken inputs, ' +
      'then the two very long ones) against half the default `TTS_TIMEOUT_MS`.',
    '',
  ];
}

function throughputSection(results: Results): string[] {
  if (results.throughput.length === 0) return [];
  return [
    '## Throughput: short `/tts` requests',
    '',
    table(
      ['concurrency', 'requests/s', 'p50', 'p99', 'errors', 'server event-loop delay p99 (worst slice)', 'max', 'idle control process p99', 'server CPU', 'machine busy', 'requests', 'seconds'],
      results.throughput.map((row) => [
        row.concurrency,
        row.requestsPerSecond,
        time(row.p50Ms),
        time(row.p99Ms),
        row.errors,
        `${row.eventLoopP99Ms} ms`,
        `${row.eventLoopMaxMs} ms`,
        `${row.idleControlP99Ms} ms`,
        `${row.serverCpuPercent}%`,
        `${row.machineBusyPercent}%`,
        row.requests,
        row.seconds,
      ]),
    ),
    '',
    'Closed loop: each of `concurrency` clients sends the 200-character mp3 `/tts` request again as soon as it has ' +
      'read its answer. A level\'s time is cut into slices taken round-robin with the other levels (so that a change in ' +
      'the machine\'s other load falls on all of them); at the end of a slice the requests in flight are waited for and ' +
      'counted. Errors are non-200 answers and failed requests. Event-loop delay: the server\'s own ' +
      '`voxreel_nodejs_eventloop_lag_p99_seconds` (prom-client\'s `monitorEventLoopDelay`, which resets on each scrape of ' +
      '`/metrics`), scraped just before and just after each slice, so each reading covers one slice; the table shows the ' +
      'worst slice. Its sampling timer runs every 10 ms and those 10 ms are in every value (an idle loop reads about ' +
      '10 ms). Idle control: the same monitor in an idle Node process started beside the server (bench/loop-probe.ts), ' +
      'read at the same moments: the delay any event loop suffers on this machine at that time, whatever it runs. Server CPU: utime + stime of the server process (all its threads; not the engine hosts or ffmpeg) per wall ' +
      'second, in % of one core. Machine busy: all cores, whoever used them (/proc/stat).',
    '',
    ...(results.spawnCost.length
      ? [
          `What a process start costs the server's event loop: \`spawn()\` returns only after fork(), which copies the ` +
            `parent's page tables, so it grows with the parent's size. Measured in a Node process made that big ` +
            `(bench/spawn-probe.ts, p50 of 10 spawns of ffmpeg): ${results.spawnCost.map((cost) => `${cost.spawnMs} ms at ${cost.rssMb} MB`).join(', ')}. ` +
            'Each `/tts` request spawns one ffmpeg, each video three and an ffprobe; compare the server\'s size in Peak resident memory below.',
          '',
        ]
      : []),
  ];
}

function peakOf(job: MemoryJob | undefined): { largest: number; parallel: number } | undefined {
  if (!job) return undefined;
  const of = (role: string) => Math.max(0, ...job.ffmpeg.filter((run) => run.role === role).map((run) => run.mb));
  return {
    largest: Math.max(0, ...job.ffmpeg.map((run) => run.mb)),
    parallel: of('picture encode') + of('AAC soundtrack'),
  };
}

function videoSection(results: Results): string[] {
  const compared = results.video.filter((row) => row.naive);
  if (compared.length === 0) return [];
  const jobs = results.memory?.jobs ?? [];
  const job = (id: string) => jobs.find((entry) => entry.id === id);
  return [
    '## `/tts-video`',
    '',
    table(
      ['frame size', 'narration', 'constant rate p50 (min–max)', '× real time', 'variable rate p50 (min–max)', '× real time', 'naive p50 (min–max)', '× real time', 'speed-up over naive (constant / variable)'],
      compared.map((row) => [
        row.case,
        `${row.duration.toFixed(1)} s`,
        spread(row.service.constant),
        row.timesRealTime.constant ?? '–',
        spread(row.service.variable),
        row.timesRealTime.variable ?? '–',
        row.naive ? spread(row.naive.total) : '–',
        row.timesRealTime.naive ?? '–',
        row.speedUpOverNaive ? `${row.speedUpOverNaive.constant}× / ${row.speedUpOverNaive.variable}×` : '–',
      ]),
    ),
    '',
    'The naive pipeline\'s time split (p50): ' +
      compared.map((row) => `${row.case}: synthesis ${time(row.naive?.synthesis.p50 ?? Number.NaN)}, render ${time(row.naive?.render.p50 ?? Number.NaN)}`).join('; ') +
      '. The synthesis is the same work the service does before it renders, so service − synthesis is roughly the service\'s render.',
    '',
    'Peak memory of one video (memory pass, see below):',
    '',
    table(
      ['frame size', 'frame rate', 'largest ffmpeg', 'picture + soundtrack encodes (side by side)', 'server RSS during the job (the MP4 written in it)'],
      compared.flatMap((row) => {
        const modes = ['constant', 'variable'].map((mode) => ({ mode, id: `video:${row.case}:${mode}` }));
        return [
          ...modes.map(({ mode, id }) => {
            const peak = peakOf(job(id));
            return [row.case, mode, mb(peak?.largest), mb(peak?.parallel), mb(job(id)?.serverRssMb)];
          }),
          [row.case, 'naive', mb(peakOf(job(`naive:${row.case}`))?.largest), '–', '–'],
        ];
      }),
    ),
    '',
    'Service: `POST /tts-video` with word captions (`subtitles` default), `fps` 30, `frame_rate` `constant` (the default) ' +
      'and `variable`, the answer read whole; the video is made, probed and published before the answer. Naive pipeline, ' +
      'in the benchmark process, on the same text: the raw pipeline\'s synthesis (as for `/tts`), the same caption layout ' +
      'written as .ass, the PCM written to a file, then one ffmpeg run: a 30 fps `color` source as long as the audio, the ' +
      '`subtitles` filter, libx264 preset medium, yuv420p, ffmpeg\'s default AAC encoder, `+faststart`. One round is the ' +
      'constant-rate request, the variable-rate request, then the naive pipeline. Speed-up = naive (synthesis + render) / ' +
      'service; × real time = video seconds per wall-clock second.',
    '',
  ];
}

function perRound(rate: ScaleRate, perMinute: boolean): string {
  const shown = (value: number) => (perMinute ? (60 * value).toFixed(1) : value.toFixed(1));
  return `${shown(rate.perSecond)} (${rate.rounds.map(shown).join(', ')})`;
}

function latencyRow(label: string, value: Latency): Array<string | number> {
  // Cache hits take a few milliseconds: a tenth of one shows.
  const ms = (at: number) => (at < 10 ? `${at.toFixed(1)} ms` : time(at));
  return [label, ms(value.p50), ms(value.p90), `${ms(value.min)}–${ms(value.max)}`, value.runs.length];
}

/** The first number of workers after which the next level gains under 10 %: where adding workers stops paying. */
export function scaleStopsAt(scale: ScaleResult, kind: 'tts' | 'video'): number | undefined {
  const levels = scale.levels;
  return levels.find((level, index) => index < levels.length - 1 && (levels[index + 1]?.[kind].perSecond ?? 0) < 1.1 * level[kind].perSecond)?.workers;
}

/** Where adding workers stops paying, and why, in words, from what the levels measured. */
function scaleVerdict(scale: ScaleResult, kind: 'tts' | 'video'): string {
  const rates = scale.levels.map((level) => ({ workers: level.workers, rate: level[kind] }));
  const [first] = rates;
  const last = rates.at(-1);
  if (!first || !last || rates.length < 2) return '';
  const stop = rates.find((row) => row.workers === scaleStopsAt(scale, kind));
  const others = Math.max(...rates.map((row) => row.rate.machineCoresBusy - row.rate.coresBusy));
  const plural = (workers: number) => `${workers} worker${workers === 1 ? '' : 's'}`;
  return (
    `one worker's ${kind === 'tts' ? 'job' : 'video'} costs ${time(first.rate.cpuMsPerJob.total)} of CPU, ${time(first.rate.cpuMsPerJob.ffmpeg)} of it in ffmpeg, ` +
    `and one worker keeps ${first.rate.coresBusy} cores busy, so on an otherwise idle machine ${scale.cores} cores allow at most ` +
    `×${(scale.cores / first.rate.coresBusy).toFixed(2)} one worker. Measured: ${rates.map((row) => `×${row.rate.speedUp} with ${plural(row.workers)}`).join(', ')}` +
    (stop
      ? `; it stops scaling at ${plural(stop.workers)}: beyond, the cores are taken and more workers only share them (a job in its worker ` +
        `took ${time(stop.rate.workerP50Ms)} with ${plural(stop.workers)}, ${time(last.rate.workerP50Ms)} with ${last.workers}).`
      : '; every step still gained 10 % or more.') +
    (others > 0.25
      ? ` Other work shared the machine (up to ${others.toFixed(2)} cores beside the cluster's): the cluster's share of the cores grew ` +
        'with its number of processes, so these speed-ups are not those of an idle machine.'
      : '')
  );
}

function scaleSection(results: Results): string[] {
  const scale = results.scale;
  if (!scale) return [];
  const { plan } = scale;
  const rateRows = (kind: 'tts' | 'video') =>
    scale.levels.map((level) => {
      const rate = level[kind];
      return [
        level.workers,
        level.clients,
        perRound(rate, kind === 'video'),
        `×${rate.speedUp}`,
        time(rate.p50Ms),
        time(rate.workerP50Ms),
        time(rate.cpuMsPerJob.total),
        `${rate.coresBusy} (${rate.machineCoresBusy})`,
        rate.errors,
        rate.jobs,
      ];
    });
  const header = (unit: string) => ['workers', 'clients', `${unit}, median (rounds)`, 'speed-up', 'p50 end to end', 'p50 in the worker', 'CPU per job', 'cores busy: cluster (machine)', 'errors', 'jobs'];
  const [one] = scale.levels;
  const roles = (rate: ScaleRate) => {
    const cpu = rate.cpuMsPerJob;
    return [time(cpu.api), time(cpu.redis), time(cpu.workers), time(cpu.ffmpeg), time(cpu.engineHosts), time(cpu.total)];
  };
  const videoLabel = `${scale.video.duration.toFixed(0)} s videos at ${scale.video.case}`;
  return [
    '## Scale-out: `voxreel worker` processes on one Redis',
    '',
    `Short \`/tts\` (one sentence, ${scale.sentenceCharacters.min}–${scale.sentenceCharacters.max} characters, mp3):`,
    '',
    table(header('jobs per second'), rateRows('tts')),
    '',
    `${videoLabel} (9:16, constant rate, word captions):`,
    '',
    table(header('videos per minute'), rateRows('video')),
    '',
    ...(one
      ? [
          'CPU time per job with one worker, by process:',
          '',
          table(
            ['job', 'API process', 'redis-server', 'worker (Node)', 'ffmpeg and ffprobe runs', 'engine hosts', 'all'],
            [
              ['short `/tts`', ...roles(one.tts)],
              [videoLabel, ...roles(one.video)],
            ],
          ),
          '',
        ]
      : []),
    `**Where it stops.** Short \`/tts\`: ${scaleVerdict(scale, 'tts')} Videos: ${scaleVerdict(scale, 'video')} ` +
      `Each worker runs one job at a time (\`CONCURRENCY=1\`): its Node process, its engine host and the job's ffmpeg, whose ` +
      `encoder threads take whatever core is free; on this ${scale.cores}-core machine a second worker can at best use what the ` +
      'first leaves idle, and more workers than that only split the same cores (their jobs take longer each).',
    '',
    `One API process with \`REDIS_URL\` (the benchmark's settings otherwise) and ${plan.levels.join(', ')} \`voxreel worker\` ` +
      'processes with `CONCURRENCY=1`, on one redis-server started by the benchmark, local storage in one temporary ' +
      '`OUTPUT_DIR` shared by all (`CDN_URL` set to the API\'s `/files`), the request cache and the sentence cache off on every ' +
      `process (\`CACHE_MAX_ENTRIES=0\`, \`SENTENCE_CACHE_MB=0\`). Closed loop with two synchronous clients per worker: short ` +
      `\`/tts\` requests for ${plan.ttsSeconds} s, each with a sentence no other request had; then ${plan.videosPerWorker} ` +
      `video${plan.videosPerWorker === 1 ? '' : 's'} per worker. A rate is jobs answered over the time from the first request to the ` +
      `last answer; the median of ${plan.rounds} round${plan.rounds === 1 ? '' : 's'} taken ${plan.levels.join('→')}` +
      `${plan.rounds > 1 ? `, then back ${[...plan.levels].reverse().join('→')}` : ''}${plan.rounds > 2 ? ', and so on' : ''}, ` +
      'workers started or stopped between levels and every new one warmed up (two short jobs and a 5 s video) before timing. ' +
      '"In the worker": its `job finished` log line. CPU: utime + stime from /proc of the API process and its children, ' +
      'redis-server, the workers\' Node processes, the programs they ran and waited for (cutime + cstime: ffmpeg, ffprobe) ' +
      'and their engine hosts; "machine" is /proc/stat\'s busy share of all cores, whoever used them.',
    '',
    'What the queue adds to a job, and a cache hit:',
    '',
    table(
      ['short `/tts`', 'p50', 'p90', 'min–max', 'runs'],
      [
        latencyRow('caches off, API process running the job itself (no `REDIS_URL`)', scale.queue.embedded),
        latencyRow('caches off, API → Redis → 1 worker → Redis → API', scale.queue.redis),
        ['difference (the queue)', `${scale.queue.p50DifferenceMs} ms`, `${scale.queue.p90DifferenceMs} ms`, '', ''],
        latencyRow('caches on, a cache hit, cache in the API process', scale.cacheHit.embedded),
        latencyRow('caches on, a cache hit, cache in Redis', scale.cacheHit.redis),
      ],
    ),
    '',
    `Queue: ${plan.latencyRuns} pairs of one request to each side, one at a time, which side goes first alternating; each pair ` +
      'a sentence of its own, the same on both sides; both processes with `CONCURRENCY=1` and the caches off, after a few ' +
      'untimed requests. The difference is the trip through Redis (BullMQ: the job added, taken by the worker, its completion ' +
      `event read by the API). Cache hits: the same two set-ups with the caches on (the defaults): one request, then the same ` +
      `request ${plan.latencyRuns} times on each side, interleaved, each answered \`cached: true\` (a look-up in the process's ` +
      'memory or in Redis, and a check that the file still exists).',
    '',
  ];
}

function memorySection(results: Results): string[] {
  const memory = results.memory;
  if (!memory) return [];
  const how: Record<string, string> = {
    'eSpeak NG host (node)': 'VmHWM, polled every 20 ms, and read on the timed server at its end',
    'Flite host (node)': 'VmHWM, polled every 20 ms (one process per job: a rise in its last 20 ms can be missed)',
  };
  return [
    '## Peak resident memory',
    '',
    table(
      ['process', 'peak RSS', 'measured'],
      [
        ['server (node)', mb(memory.serverPeakMb), "VmHWM of the timed server's /proc status after all its sections (throughput at 8 included)"],
        ...Object.entries(memory.processes).map(([kind, value]) => [kind, mb(value), how[kind] ?? 'VmHWM, polled every 20 ms']),
        ...Object.entries(memory.ffmpeg).map(([role, value]) => [
          role === 'ffprobe' ? 'ffprobe' : `ffmpeg: ${role}`,
          mb(value),
          'GNU time `%M` (exact peak at exit), largest run',
        ]),
      ],
    ),
    '',
    `The timed server's VmHWM after each of its sections: ${Object.entries(memory.serverPeakAfterMb)
      .map(([name, value]) => `${name} ${mb(value)}`)
      .join(', ')}.`,
    '',
    'Per request in the memory pass (ffmpeg and ffprobe runs in the order they ended, each with its peak RSS and wall time):',
    '',
    table(
      ['request', 'wall time', 'server RSS during it', 'ffmpeg / ffprobe runs'],
      memory.jobs.map((job) => [
        job.id,
        time(job.ms),
        mb(job.serverRssMb),
        job.ffmpeg.map((run) => `${run.role} ${run.mb} MB ${run.seconds.toFixed(2)} s`).join(', ') || '–',
      ]),
    ),
    '',
    'Memory pass: after the timed sections, a second server is started the same way but with `FFMPEG_PATH` and ' +
      '`FFPROBE_PATH` pointing at wrappers that run them under GNU `time -f %M` (exact peak RSS at exit; the wrapper ' +
      'costs a fork and an exec, which is why the timed sections do not use it). One request of each kind is sent, one ' +
      'after another, while the server\'s process tree is polled every 20 ms from /proc (`VmHWM` of each child, `VmRSS` ' +
      'of the server). The naive pipeline runs in the benchmark process through the same ffmpeg wrapper.',
    '',
  ];
}

function verdict(fit: LinearFit, unit: string): string {
  const share = Math.round((100 * fit.intercept) / (fit.points.at(-1)?.y ?? 1));
  const line =
    `Least-squares line: ${time(fit.intercept)} fixed + ${fit.slope.toFixed(2)} ms per ${unit} (R² ${fit.r2}); the fixed part is ` +
    `${share}% of the largest case.`;
  const off = fit.points.filter((point) => Math.abs(point.residualPercent) > 10);
  if (off.length === 0) return `${line} Linear: every point within ±${fit.worstPercent}% of the line.`;
  return `${line} Not linear at ${off.map((point) => `${point.x} (${point.residualPercent > 0 ? '+' : ''}${point.residualPercent}% off the line)`).join(', ')}.`;
}

function scalingSection(results: Results): string[] {
  const { tts, video } = results.scaling;
  if (!tts && !video) return [];
  const lines = ['## How cost grows with work', ''];
  if (tts) {
    lines.push(
      table(
        ['characters', '`/tts` p50', 'per 1000 characters', 'marginal, per 1000 from the previous size', 'off the line'],
        tts.points.map((point) => [point.x, time(point.y), time((1000 * point.y) / point.x), point.marginal === null ? '–' : time(1000 * point.marginal), `${point.residualPercent}%`]),
      ),
      '',
      verdict(tts, 'character'),
      '',
    );
  }
  if (video) {
    const rows = results.video.filter((row) => row.case === PORTRAIT.label).sort((a, b) => a.duration - b.duration);
    lines.push(
      table(
        ['narration', 'characters', 'constant p50', 'per minute of video', 'off the line', 'variable p50', 'per minute of video', 'off the line'],
        rows.map((row, index) => [
          `${row.duration.toFixed(1)} s`,
          row.characters,
          time(row.service.constant.p50),
          time((60 * row.service.constant.p50) / row.duration),
          `${video.constant.points[index]?.residualPercent ?? '–'}%`,
          time(row.service.variable.p50),
          time((60 * row.service.variable.p50) / row.duration),
          `${video.variable.points[index]?.residualPercent ?? '–'}%`,
        ]),
      ),
      '',
      `Constant rate: ${verdict(video.constant, 'second of video')}`,
      '',
      `Variable rate: ${verdict(video.variable, 'second of video')}`,
      '',
    );
  }
  lines.push(
    `\`/tts\` sizes are the latency section's texts (same runs); videos are ${PORTRAIT.label} with word captions, the ` +
      'narration text scaled to the length asked for (the length reached is shown). "Off the line" is the measured p50\'s ' +
      'distance from the least-squares line, as a share of the p50; beyond ±10% the growth is called not linear there.',
    '',
  );
  return lines;
}

function speechTable(rows: readonly SpeechRow[]): string {
  return table(
    ['voice', 'format', 'first byte p50 (min–max)', 'last byte p50 (min–max)', 'runs'],
    rows.map((row) => [`\`${row.voice}\``, row.format, spread(row.firstByte), spread(row.lastByte), row.firstByte.runs.length]),
  );
}

function speechSection(results: Results): string[] {
  const speech = results.speech;
  const lines = ['## OpenAI-compatible streaming: time to the first audio byte', ''];
  if (!speech) return [];
  if (!speech.measured) return [...lines, `Not measured: ${speech.reason}.`, ''];
  return [
    ...lines,
    speechTable(speech.rows),
    '',
    `\`POST /v1/audio/speech\` with a ${speech.characters}-character \`input\` and \`response_format\` mp3 or pcm: time from ` +
      'sending the request to the first non-empty chunk of the body, and to its end; one warm-up request per voice first. ' +
      'OpenAI voice names map to local voices as docs/api.md says.',
    '',
  ];
}

function looksSection(results: Results): string[] {
  const looks = results.looks;
  if (!looks) return [];
  return [
    '## Videos people post: keyframes, loudness, backgrounds, styles, music',
    '',
    table(
      ['', 'p50 (min–max)', 'runs'],
      [
        ...looks.renders.map((render) => [`renderVideo, ${render.label}`, spread(render.time), render.time.runs.length]),
        ['`POST /tts-video`, the plain default', spread(looks.service.plain), looks.service.plain.runs.length],
        ['`POST /tts-video`, uploaded 1920×1080 JPEG background, `caption_style: "bold"`, uploaded MP3 music (stereo, the default with music)', spread(looks.service.looks), looks.service.looks.runs.length],
        ['the same, `channels: 1`', spread(looks.service.looksMono), looks.service.looksMono.runs.length],
        [`\`POST /tts-video\`, plain, ${looks.chineseSeconds} s of Chinese by \`${looks.chineseVoice}\``, spread(looks.service.chinese), looks.service.chinese.runs.length],
      ],
    ),
    '',
    `${looks.seconds} s of narration by \`${looks.voice}\` at 1080×1920, constant 30 fps, word captions. The renderer rows time ` +
      '`renderVideo` alone on the same speech and captions (no synthesis, no HTTP), in rounds with the service rows. ' +
      `A keyframe every 2 s costs ×${looks.keyframeCost} of the render with a single keyframe. The Chinese video takes ` +
      `×${looks.chineseRatio} the English one's time per second of video (its words are cut by Intl.Segmenter).`,
    '',
  ];
}

function movingSection(results: Results): string[] {
  const moving = results.moving;
  if (!moving) return [];
  return [
    '## Scenes and moving pictures: four stills and a title, zoom, pan, progress bar, a clip',
    '',
    table(
      ['renderVideo, 1080×1920, pop captions', 'path', 'p50 (min–max)', '× real time', 'MB per minute', 'PSNR against x264 slow CRF 12'],
      moving.rows.map((row) => [row.label, row.renderPath, spread(row.time), row.realTime, row.megabytesPerMinute, row.psnr === null ? '–' : `${row.psnr} dB`]),
    ),
    '',
    `${moving.seconds} s of narration by \`${moving.voice}\`, constant 30 fps, over a 1920×1080 JPEG (the scenes: three more ` +
      'views of the same set, a quarter of the narration each, and a title over the first 3 s; the clip: 10 s of 1080×1920 H.264 looped). ' +
      'A moving picture is encoded whole by x264 `veryfast` (subme 1, diamond motion search; renderPath `moving`), one of 20 s or more with ' +
      'a single background in two halves at once (a looped clip decoded once, its frames read again each loop); its PSNR is against the ' +
      'same frames encoded by x264 `slow` at CRF 12. The targets: four ' +
      `still scenes and a title in at most 1.5× one still (×${moving.scenesRatio} here), a moving picture in at most a quarter of real ` +
      'time (×0.25) and at least 38 dB.',
    '',
  ];
}

function wyomingSection(results: Results): string[] {
  const wyoming = results.wyoming;
  if (!wyoming) return [];
  if (!wyoming.measured) return ['## Wyoming: voxreel against wyoming-piper', '', `Not measured: ${wyoming.reason}.`, ''];
  return [
    '## Wyoming: voxreel against wyoming-piper',
    '',
    table(
      [
        'text',
        'first audio-chunk, voxreel (1.32)',
        'voxreel (1.30)',
        'wyoming-piper',
        'audio-stop, voxreel (1.32)',
        'voxreel (1.30)',
        'wyoming-piper',
      ],
      wyoming.rows.map((row) => [
        `${row.text}: ${row.characters} characters, ${row.audioSeconds} s`,
        spread(row.voxreel.firstMs),
        spread(row.voxreelNpm.firstMs),
        spread(row.wyomingPiper.firstMs),
        spread(row.voxreel.totalMs),
        spread(row.voxreelNpm.totalMs),
        spread(row.wyomingPiper.totalMs),
      ]),
    ),
    '',
    `The same \`${wyoming.voice}\` model served by voxreel (\`WYOMING_PORT\`, the voice warm from start-up; once on ONNX Runtime 1.32 from ` +
      "PyPI as script/setup installs it, once on onnxruntime-node 1.30 from npm, the fallback) and by PyPI's " +
      'wyoming-piper 2.5.2 (its own virtual environment), asked by the real client (PyPI wyoming, AsyncTcpClient) as Home Assistant ' +
      'asks: a `synthesize` event, timed to the first `audio-chunk` and to `audio-stop`; the two servers alternate, one untimed round first.',
    '',
  ];
}

/** Which sections a later partial run measured again (npm run bench -- --only … --merge), when and on what. */
function remeasuredLines(results: Results): string[] {
  return (results.remeasured ?? []).flatMap((run) => [
    `**Measured again** on ${run.date.slice(0, 16).replace('T', ' ')} UTC at commit ${run.commit}${run.uncommittedChanges ? ' (with uncommitted changes)' : ''}, ` +
      `in ${Math.round(run.seconds)} s (load average ${run.loadAverage.start.join(', ')} at its start): ${run.sections.map((section) => `\`${section}\``).join(', ')}; ` +
      'their figures below and their targets are from that run, the rest from the run above.',
    '',
  ]);
}

function longFormSection(results: Results): string[] {
  const longForm = results.longForm;
  if (!longForm) return [];
  const { audio, takeover, video } = longForm;
  const minutes = (seconds: number) => `${(seconds / 60).toFixed(1)} min`;
  const memory = (tree: { restMb: number; peakMb: number; aboveRestMb: number }) => `${tree.restMb} MB at rest, ${tree.peakMb} MB at most (${tree.aboveRestMb} MB above rest)`;
  return [
    '## Long jobs: 100,000 characters by job, a worker killed part way, a 15-minute video',
    '',
    table(
      ['job', 'output', 'wall time', '× real time', 'whole process tree'],
      [
        [`\`/tts\` mp3, ${audio.characters} characters`, minutes(audio.audioSeconds), `${audio.wallSeconds} s`, `${audio.realTime}×`, memory(audio.memory)],
        [`\`/tts-video\` ${video.width}×${video.height}, ${video.characters} characters`, minutes(video.videoSeconds), `${video.wallSeconds} s`, `${video.realTime}×`, memory(video.memory)],
      ],
    ),
    '',
    `Voice \`${longForm.voice}\`; the text is the first chapters of Alice's Adventures in Wonderland (fixtures/alice-chapters-1-8.txt), cut at a sentence. ` +
      'Each job is sent with `"async": true` to a fresh service (the start-up voice loaded and used once, then at rest) and followed with `GET /jobs/{id}` ' +
      `every second from its submission to its success; memory is the resident memory of the service and every process under it, sampled every 250 ms. ` +
      `Progress: ${audio.polls} polls, ${audio.progressMonotonic ? 'charactersDone and progress never fell' : '**charactersDone or progress fell**'}. ` +
      `The chapters' headings are Markdown headings (\`# Chapter I: Down the Rabbit-Hole\`)` +
      (video.chapters === undefined ? '.' : `: in the video, a frame decoded a second after each chapter starts shows its card in ${video.cardsSeen} of ${video.chapters} chapters and captions in ${video.captionsSeen}.`),
    '',
    takeover.measured
      ? `Takeover: the same job on an API process and two \`voxreel worker\`s (one Redis, one shared OUTPUT_DIR); the worker running it was killed (SIGKILL) ` +
        `at ${Math.round(takeover.killedAt * 100)} % of its characters; the other took it over and read ${takeover.resumedSentences} spoken sentences back from the checkpoints; ` +
        `done ${takeover.wallSeconds} s after submission, progress ${takeover.progressMonotonic ? 'never falling' : '**falling**'}; the file is ` +
        `${takeover.identical ? 'byte-identical to' : '**not** identical to'} the uninterrupted run's.`
      : `Takeover: not measured (${takeover.reason}).`,
    '',
  ];
}

function voicesSection(results: Results): string[] {
  const voices = results.voices;
  if (!voices) return [];
  const { wordErrorRates, speech, video } = voices;
  const judged = (voice: string) => (wordErrorRates.measured ? wordErrorRates.rows.find((candidate) => candidate.voice === voice) : undefined);
  const errorRate = (voice: string) => {
    const row = judged(voice);
    return row ? `${(100 * row.wordErrorRate).toFixed(1)}%` : '–';
  };
  const dnsmos = (voice: string) => judged(voice)?.dnsmos?.toFixed(2) ?? '–';
  const factor = (value: { p50: number; runs: number[] }) => `${value.p50}× (${Math.min(...value.runs)}–${Math.max(...value.runs)})`;
  const runs = Math.max(0, ...voices.realTime.map((row) => row.one.runs.length));
  return [
    '## Voices: speed, intelligibility and naturalness per engine, the neural voice end to end',
    '',
    table(
      ['voice', 'audio', 'real time, one at a time p50 (min–max)', 'two at once p50 (min–max)', 'word error rate', 'DNSMOS', 'runs'],
      voices.realTime.map((row) => [
        `\`${row.voice}\``,
        `${row.audioSeconds.toFixed(1)} s`,
        factor(row.one),
        factor(row.two),
        errorRate(row.voice),
        dnsmos(row.voice),
        row.one.runs.length,
      ]),
    ),
    '',
    `Real-time factor: seconds of audio per second of wall time, \`POST /tts\` with \`format: "wav"\` of the ` +
      `${voices.realTime[0]?.characters ?? '–'}-character narration the video section speaks (about a minute with eSpeak NG), ` +
      `the answer read whole; two at once: two such requests sent together, both answers' audio over the time until the later ` +
      `one. ${runs === 1 ? 'One run' : `${runs} runs`} of each, in rounds over the voices, after one short request per voice. ` +
      (wordErrorRates.measured
        ? 'Word error rate: the Rainbow Passage\'s first paragraph (test/helpers/judge.ts) spoken as wav by the service, ' +
          'heard by Whisper base (faster-whisper, CPU int8, beam 5) and scored by word edits over its words, both sides in lower ' +
          'case without punctuation and with digits spelled out; it measures what a recognizer tuned to natural speech makes ' +
          'of the voice, lower is better. DNSMOS: Microsoft\'s DNSMOS P.808 (speechmos) of the same reading, a predicted ' +
          'mean opinion score from 1 to 5, higher is better. One reading each: the neural voice\'s vary by a word or two.'
        : `Word error rates not measured: ${wordErrorRates.reason}.`) +
      (voices.missing.length ? ` Not listed by \`GET /voices\` on this machine, not measured: ${voices.missing.map((voice) => `\`${voice}\``).join(', ')}.` : ''),
    '',
    ...(speech?.measured
      ? [
          speechTable(speech.rows),
          '',
          `The neural voice streamed by \`POST /v1/audio/speech\` as in the section above (${speech.characters} characters).`,
          '',
        ]
      : []),
    ...(video
      ? [
          `\`POST /tts-video\` with \`${video.voice}\`, ${video.case} (\`aspect_ratio\` 9:16), constant frame rate, word captions, ` +
            `${video.characters} characters of the same prose scaled by the voice's measured speaking rate to ` +
            `${video.duration.toFixed(1)} s of narration: ${spread(video.time)} over ${video.time.runs.length} ${video.time.runs.length === 1 ? 'run' : 'runs'}, ` +
            `${video.timesRealTime}× real time.`,
          '',
        ]
      : []),
  ];
}

/** README's Performance section: headline figures only, each from BENCHMARKS.json. */
export function readmeSection(results: Results): string {
  const { machine } = results;
  const tts = (characters: number) => results.tts.find((row) => row.characters === characters);
  const [short, long] = [tts(200), tts(5000)];
  const video = results.video.find((row) => row.case === PORTRAIT.label && row.plannedSeconds === 60);
  const busiest = [...results.throughput].sort((a, b) => b.requestsPerSecond - a.requestsPerSecond)[0];
  const worstLag = Math.max(...results.throughput.map((row) => row.eventLoopP99Ms));
  const passed = results.targets.filter((target) => target.pass).length;
  const host = results.memory?.processes['eSpeak NG host (node)'];
  const largestFfmpeg = Math.max(
    0,
    ...Object.entries(results.memory?.ffmpeg ?? {})
      .filter(([role]) => role !== 'naive render')
      .map(([, value]) => value ?? 0),
  );
  const busy = Math.max(...machine.loadAverage.start, ...machine.loadAverage.end) > machine.cpus;
  const missed = results.targets.filter((target) => !target.pass);
  const lines = [
    '',
    `Measured by \`npm run bench\` on ${machine.date.slice(0, 10)}, ${machine.cpus} cores and ${machine.memoryGiB} GiB, ` +
      `load average ${machine.loadAverage.start[0]} at the start and ${machine.loadAverage.end[0]} at the end` +
      `${busy ? ' (other work shared the machine)' : ''}. Method, every table and ` +
      'the targets: [BENCHMARKS.md](BENCHMARKS.md); the figures below are from [BENCHMARKS.json](BENCHMARKS.json).',
    '',
  ];
  if (short && long) {
    lines.push(
      `- \`/tts\` (mp3, eSpeak NG), p50 end to end: 200 characters in ${time(short.service.p50)}, 5000 characters in ` +
        `${time(long.service.p50)}; ${short.ratio.toFixed(2)}× and ${long.ratio.toFixed(2)}× the engine + ffmpeg alone.`,
    );
  }
  const worstVoices = [...new Set(results.worstCases.map((row) => row.voice))];
  if (worstVoices.length) {
    const slowest = worstVoices.flatMap((voice) => slowestOf(results.worstCases.filter((row) => row.voice === voice)) ?? []);
    lines.push(
      `- The worst 5000-character \`/tts\` inputs (one-word sentences, runs of marks, "W" × 5000, …), slowest run per voice: ` +
        `${slowest.map((row) => `\`${row.voice}\` ${time(row.time.max)} (${row.label}, ${answersOf(row)})`).join(', ')}; ` +
        `the deadline is ${EnvSchema.properties.TTS_TIMEOUT_MS.default / 1000} s.`,
    );
  }
  if (busiest) {
    lines.push(
      `- Short \`/tts\` requests: up to ${busiest.requestsPerSecond} per second (concurrency ${busiest.concurrency}, p99 ` +
        `${time(busiest.p99Ms)}), ${results.throughput.reduce((sum, row) => sum + row.errors, 0)} errors; server event-loop delay p99 at most ${worstLag} ms.`,
    );
  }
  const scale = results.scale;
  if (scale && scale.levels.length > 1) {
    const rates = (kind: 'tts' | 'video', per: number) =>
      scale.levels.map((level) => `${(per * level[kind].perSecond).toFixed(1)} (×${level[kind].speedUp})`).join(', ');
    const [one] = scale.levels;
    const stopsAt = (kind: 'tts' | 'video') => {
      const workers = scaleStopsAt(scale, kind);
      return workers === undefined ? 'gained at every level' : `stop scaling at ${workers} worker${workers === 1 ? '' : 's'}`;
    };
    const [ttsStop, videoStop] = [stopsAt('tts'), stopsAt('video')];
    const stops = ttsStop === videoStop ? `Both ${ttsStop}` : `Short jobs ${ttsStop}, videos ${videoStop}`;
    lines.push(
      `- Workers on one Redis (${scale.levels.map((level) => level.workers).join(', ')} \`voxreel worker\` processes, one job at a time each, ${scale.cores} cores): ` +
        `short \`/tts\` ${rates('tts', 1)} jobs per second, ${scale.video.duration.toFixed(0)} s ${scale.video.case} videos ${rates('video', 60)} per minute. ` +
        `${stops}: one worker alone keeps ${one?.tts.coresBusy} of the ${scale.cores} cores busy ` +
        `with short jobs and ${one?.video.coresBusy} with videos (ffmpeg's threads), and more workers only share the rest. ` +
        `The queue adds ${time(scale.queue.p50DifferenceMs)} to a short job (p50); a cache hit answers in ${scale.cacheHit.embedded.p50} ms in one process, ${scale.cacheHit.redis.p50} ms through Redis.`,
    );
  }
  if (video?.speedUpOverNaive) {
    lines.push(
      `- \`/tts-video\`, ${video.duration.toFixed(0)} s of narration at ${video.case} with word captions: ` +
        `${time(video.service.constant.p50)} at constant frame rate (${video.timesRealTime.constant}× real time), ` +
        `${time(video.service.variable.p50)} at variable rate (${video.timesRealTime.variable}×); ` +
        `${video.speedUpOverNaive.constant}× and ${video.speedUpOverNaive.variable}× faster than a naive ffmpeg pipeline.`,
    );
  }
  const neural = results.voices?.realTime.find((row) => row.voice === NEURAL_VOICE);
  if (neural && results.voices?.video) {
    const firstByte = results.voices.speech?.measured ? results.voices.speech.rows.find((row) => row.format === 'mp3') : undefined;
    lines.push(
      `- Neural voice \`${NEURAL_VOICE}\`: ${neural.one.p50}× real time (${neural.two.p50}× two at once)` +
        `${firstByte ? `, first streamed mp3 byte in ${time(firstByte.firstByte.p50)}` : ''}; a ${results.voices.video.duration.toFixed(0)} s ` +
        `${results.voices.video.case} video in ${time(results.voices.video.time.p50)}.`,
    );
  }
  if (results.memory) {
    const [first = Number.NaN] = Object.values(results.memory.serverPeakAfterMb);
    const grows = results.memory.serverPeakMb > 1.5 * first ? ' (it grows with the requests served: see the notes in BENCHMARKS.md)' : '';
    lines.push(
      `- Peak memory: server ${mb(first)} after start-up and ${mb(results.memory.serverPeakMb)} at the end of the run${grows}, ` +
        `each eSpeak NG host ${mb(host)}, largest ffmpeg run ${mb(largestFfmpeg)}.`,
    );
  }
  lines.push(
    `- Targets met: ${passed} of ${results.targets.length}` +
      (missed.length ? `; missed: ${missed.map((target) => `${target.description} ${target.value} ${target.unit} (target ${target.target})`).join('; ')}.` : '.'),
    '',
  );
  return `${lines.join('\n')}\n`;
}

function startProfileSection(results: Results): string[] {
  if (!results.startProfile) return [];
  return [
    '## The start of every process kind, profiled',
    '',
    'Each kind started alone with `--cpu-prof` (the median run of three shown; bench/start-profile.ts): its time to ready ' +
      '(the API: `/readyz` 200 with the start-up voice warm; a worker: its `/readyz`; an engine host: its ready message, and in ' +
      "brackets its first job's answer) and the entries with the most self time. Node's own loading is charged to the program " +
      'file that asked for it (`← caller`).',
    '',
    startProfileTable(results.startProfile),
    '',
  ];
}
