// What one benchmark run measured: written to BENCHMARKS.json, read by the report and the targets.
import type { FirstMinuteResult } from './first-minute.js';
import type { LongFormResult } from './long-form.js';
import type { LooksResult } from './looks.js';
import type { MachineFacts } from './machine.js';
import type { MemoryResult } from './memory-pass.js';
import type { MovingResult } from './moving.js';
import type { ScaleResult } from './scale.js';
import type { SpeechResult } from './speech.js';
import type { StartProfileRow } from './start-profile.js';
import type { LinearFit } from './stats.js';
import type { SpawnCost, ThroughputRow } from './throughput.js';
import type { ProcessStart, TtsRow } from './tts.js';
import type { VideoRow } from './video.js';
import type { VoicesResult } from './voices.js';
import type { WorstCaseRow } from './worst-case.js';
import type { WyomingComparison } from './wyoming-compare.js';

export interface Results {
  kind: 'full' | 'quick' | 'partial';
  machine: MachineFacts;
  voice: string;
  /** Wall time of the whole benchmark, seconds. */
  seconds: number;
  targets: TargetResult[];
  tts: TtsRow[];
  processStart: ProcessStart | null;
  throughput: ThroughputRow[];
  spawnCost: SpawnCost[];
  video: VideoRow[];
  looks: LooksResult | null;
  moving: MovingResult | null;
  wyoming: WyomingComparison | null;
  scaling: { tts: LinearFit | null; video: { constant: LinearFit; variable: LinearFit } | null };
  memory: MemoryResult | null;
  speech: SpeechResult | null;
  worstCases: WorstCaseRow[];
  voices: VoicesResult | null;
  scale: ScaleResult | null;
  firstMinute: FirstMinuteResult | null;
  /** Each process kind's start under --cpu-prof: its time to ready and its top self-time entries (bench/start-profile.ts). */
  startProfile: StartProfileRow[] | null;
  /** Issue 40's long jobs (bench/long-form.ts). */
  longForm: LongFormResult | null;
  /** Sections measured again after this run, by `npm run bench -- --only … --merge`, in order. */
  remeasured?: Remeasured[];
}

/** A later partial run merged into the results: its sections replace the full run's. */
export interface Remeasured {
  sections: string[];
  date: string;
  commit: string;
  uncommittedChanges: boolean;
  loadAverage: { start: number[]; end: number[] };
  /** Wall time of that run, seconds. */
  seconds: number;
}

/** One target of an issue, judged on this run. */
export interface TargetResult {
  id: string;
  description: string;
  /** As the issue states it. */
  target: string;
  value: number;
  unit: string;
  pass: boolean;
}
