import type { Results } from './run.js';
import { PORTRAIT } from './video.js';

export interface TargetResult {
  id: string;
  description: string;
  /** As the issue states it. */
  target: string;
  value: number;
  unit: string;
  pass: boolean;
}

/** The targets, each judged on the measured p50 (or p99 where it says so); only those this run measured. */
export function evaluateTargets(results: Pick<Results, 'tts' | 'throughput' | 'video' | 'worstCases'>): TargetResult[] {
  const targets: TargetResult[] = [];
  const add = (id: string, description: string, value: number, unit: string, limit: number, target: string, strict = false) =>
    targets.push({ id, description, target, value, unit, pass: strict ? value < limit : value <= limit });
  const tts = (characters: number) => results.tts.find((row) => row.characters === characters);
  const short = tts(200);
  const long = tts(5000);
  if (short) add('tts-200-p50', '/tts 200 characters, p50', short.service.p50, 'ms', 150, '≤ 150 ms');
  if (long) add('tts-5000-p50', '/tts 5000 characters, p50', long.service.p50, 'ms', 1500, '≤ 1500 ms');
  for (const row of [short, long]) {
    if (row) add(`tts-${row.characters}-ratio`, `/tts ${row.characters} characters, service / raw pipeline`, row.ratio, '×', 1.15, '≤ 1.15');
  }
  for (const row of results.throughput) {
    add(`event-loop-c${row.concurrency}`, `server event-loop delay p99 at concurrency ${row.concurrency}`, row.eventLoopP99Ms, 'ms', 50, '< 50 ms', true);
  }
  // The video targets are for a minute of narration; a quick run's shorter video is not judged.
  const portrait = results.video.find((row) => row.case === PORTRAIT.label && row.plannedSeconds === 60);
  if (portrait) {
    add('video-constant', `/tts-video ${PORTRAIT.label}, ${portrait.duration.toFixed(1)} s, constant rate, p50`, portrait.service.constant.p50, 'ms', 3000, '≤ 3000 ms');
    add('video-variable', `/tts-video ${PORTRAIT.label}, ${portrait.duration.toFixed(1)} s, variable rate, p50`, portrait.service.variable.p50, 'ms', 1000, '≤ 1000 ms');
  }
  return targets;
}
