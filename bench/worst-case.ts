import { postJson, warmVoices, type Service } from './service.js';
import { inRounds, timings, type Timings } from './stats.js';
import { punctuatedOf, textOf } from './texts.js';

/** Each engine's main English voice; Festival's only when the server lists it. */
export const WORST_CASE_VOICES = ['espeak-ng:en-us', 'flite:slt', 'festival:slt-hts'];

/** The refusal of a text that would speak for longer than MAX_AUDIO_SECONDS. */
export const TOO_LONG = '422 OUTPUT_TOO_LONG';

export interface WorstInput {
  id: string;
  label: string;
  text: string;
  /**
   * `slow`: the slowest text to speak that a voice may still speak within MAX_AUDIO_SECONDS; `long`: text that a
   * voice reading it out letter by letter or digit by digit speaks far beyond it, to be refused early rather than
   * run into the deadline. Either may get a 200, or TOO_LONG where the voice would speak it for longer than the limit.
   */
  kind: 'slow' | 'long';
}

/** Issue 10's worst cases at the longest text /tts takes. */
export const WORST_INPUTS: readonly WorstInput[] = [
  { id: 'one-word-sentences', label: '"A. " × 1666', text: 'A. '.repeat(1666), kind: 'slow' },
  { id: 'prose', label: 'prose', text: textOf(5000), kind: 'slow' },
  { id: 'mark-runs', label: 'prose with runs of marks', text: punctuatedOf(5000), kind: 'slow' },
  { id: 'letters', label: '"W" × 5000', text: 'W'.repeat(5000), kind: 'long' },
  { id: 'digits', label: 'digits × 5000', text: '1234567890'.repeat(500), kind: 'long' },
];

/** What any worst case may answer; anything else (a deadline, a failure) is a miss. */
const VALID_ANSWERS = ['200', TOO_LONG];

/** A run slower than this is not repeated: one run tells whether it is within the deadline. */
const SLOW_MS = 10_000;

export interface WorstCaseRow {
  voice: string;
  /** WORST_INPUTS' id and label. */
  input: string;
  label: string;
  characters: number;
  kind: WorstInput['kind'];
  /** Status (and error code) of each run, in order: "200" or "422 OUTPUT_TOO_LONG". */
  answers: string[];
  /** Every answer was 200 or TOO_LONG. */
  asExpected: boolean;
  /** Seconds of audio in the file, when the answer was 200. */
  audioSeconds: number | null;
  time: Timings;
}

interface TtsAnswer {
  duration?: number;
  error?: { code?: string };
}

/**
 * POST /tts (mp3, end to end) on each of `inputs` with each of `voices` that the server lists, in rounds: up to `runs`
 * runs, one only where a run takes over SLOW_MS. One short request per voice first, so that no engine starts cold.
 */
export async function measureWorstCases(service: Service, plan: { runs: number; voices: readonly string[]; inputs: readonly string[] }): Promise<WorstCaseRow[]> {
  const voices = await warmVoices(service, plan.voices);
  const inputs = WORST_INPUTS.filter((input) => plan.inputs.includes(input.id));
  const items = voices.flatMap((voice) => inputs.map((input) => ({ voice, input, answers: [] as string[], ms: [] as number[], audioSeconds: null as number | null })));
  await inRounds(
    items,
    (item) => (item.ms.some((ms) => ms > SLOW_MS) ? 1 : plan.runs),
    async (item) => {
      const answer = await postJson<TtsAnswer>(`${service.baseUrl}/tts`, { text: item.input.text, voice: item.voice, format: 'mp3' });
      item.ms.push(answer.ms);
      item.answers.push(answer.status === 200 ? '200' : `${answer.status} ${answer.body.error?.code ?? ''}`.trimEnd());
      if (answer.status === 200) item.audioSeconds = answer.body.duration ?? null;
    },
  );
  return items.map(({ voice, input, answers, ms, audioSeconds }) => {
    const row: WorstCaseRow = {
      voice,
      input: input.id,
      label: input.label,
      characters: input.text.length,
      kind: input.kind,
      answers,
      asExpected: answers.every((answer) => VALID_ANSWERS.includes(answer)),
      audioSeconds,
      time: timings(ms),
    };
    console.log(
      `  /tts ${voice}, ${input.label}: ${answersOf(row)}${row.asExpected ? '' : ' (unexpected)'} in ${row.time.p50} ms ` +
        `(${ms.length} runs)${audioSeconds === null ? '' : `, ${audioSeconds.toFixed(0)} s of audio`}`,
    );
    return row;
  });
}

/** The distinct answers of a row's runs, in order of first appearance. */
export function answersOf(row: Pick<WorstCaseRow, 'answers'>): string {
  return [...new Set(row.answers)].join(' / ');
}

/** The row whose slowest run was the slowest. */
export function slowestOf(rows: readonly WorstCaseRow[]): WorstCaseRow | undefined {
  return rows.reduce<WorstCaseRow | undefined>((worst, row) => (worst && worst.time.max >= row.time.max ? worst : row), undefined);
}
