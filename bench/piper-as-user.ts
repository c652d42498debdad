/**
 * Piper as a user runs it: one paragraph to a WAV file, voxreel's `/tts` (the service as `npm start` runs it, warm,
 * caches off) against piper-tts's `PiperVoice.synthesize_wav` in one Python process with the voice loaded, on the
 * same model and text; the sides alternate (the order rotated each round), medians compared. voxreel runs once
 * per ONNX Runtime (1.32 from PyPI, 1.30 from npm), each its own service, so the runtime's share is seen apart.
 *
 *   node --import tsx bench/piper-as-user.ts [--runs 5]
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_PYTHON, PiperTts } from './piper-compare.js';
import { RUNTIMES, runtimeEnv, type Runtime } from './runtimes.js';
import { postOk, startService, type Service } from './service.js';
import { median, round } from './stats.js';
import { textOf } from './texts.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const VOICE = 'en_US-joe-medium';
/** A paragraph as a user would send it (about 45 s of speech). */
const PARAGRAPH_CHARACTERS = 730;

export type PiperAsUser =
  | {
      measured: true;
      characters: number;
      /** × real time (audio seconds per wall second), median of the runs, per side. */
      speed: Record<Runtime | 'piperTts', number>;
      /** voxreel's speed over piper-tts's, round by round, and its median, per runtime. */
      ratio: Record<Runtime, { p50: number; runs: number[] }>;
    }
  | { measured: false; reason: string };

async function timedTts(service: Service, text: string): Promise<number> {
  const answer = await postOk<{ duration: number }>(`${service.baseUrl}/tts`, { text, voice: `piper:${VOICE}`, format: 'wav' });
  return answer.body.duration / (answer.ms / 1000);
}

export async function measurePiperAsUser(options: { runs: number; python?: string }): Promise<PiperAsUser> {
  const python = options.python ?? DEFAULT_PYTHON;
  const model = path.join(ROOT, 'voices', `${VOICE}.onnx`);
  if (!existsSync(model)) return { measured: false, reason: `${model} is not installed` };
  if (!existsSync(python)) return { measured: false, reason: `${python} is missing (install piper-tts into a virtual environment)` };
  const text = textOf(PARAGRAPH_CHARACTERS);
  const services = new Map<Runtime, Service>();
  let tts: PiperTts | undefined;
  try {
    for (const runtime of RUNTIMES) services.set(runtime, await startService({ WARM_VOICE: `piper:${VOICE}`, ...runtimeEnv(runtime) }));
    tts = await PiperTts.start(python, model);
    const sides: Array<{ name: Runtime | 'piperTts'; speak: () => Promise<number> }> = [
      ...RUNTIMES.map((runtime) => ({ name: runtime, speak: () => timedTts(services.get(runtime) as Service, text) })),
      { name: 'piperTts' as const, speak: async () => ((answer) => answer.audioSeconds / answer.seconds)(await (tts as PiperTts).speak(text, 'wav')) },
    ];
    const speeds = new Map<string, number[]>(sides.map((side) => [side.name, []]));
    const ratios = new Map<Runtime, number[]>(RUNTIMES.map((runtime) => [runtime, []]));
    for (let round = -1; round < options.runs; round += 1) {
      const measured = new Map<string, number>();
      // One untimed round first; then each round starts with the next side, so none always follows another's load.
      for (let turn = 0; turn < sides.length; turn += 1) {
        const side = sides[(Math.max(round, 0) + turn) % sides.length] as (typeof sides)[number];
        measured.set(side.name, await side.speak());
      }
      if (round < 0) continue;
      for (const [name, speed] of measured) speeds.get(name)?.push(speed);
      for (const runtime of RUNTIMES) ratios.get(runtime)?.push((measured.get(runtime) as number) / (measured.get('piperTts') as number));
      console.log(`  as a user, round ${round + 1}: ${[...measured].map(([name, speed]) => `${name} ${round1(speed)}×`).join(', ')}`);
    }
    const p50 = (name: string) => round(median(speeds.get(name) ?? []), 2);
    return {
      measured: true,
      characters: text.length,
      speed: { pypi: p50('pypi'), npm: p50('npm'), piperTts: p50('piperTts') },
      ratio: Object.fromEntries(
        RUNTIMES.map((runtime) => {
          const runs = ratios.get(runtime) ?? [];
          return [runtime, { p50: round(median(runs), 3), runs: runs.map((value) => round(value, 3)) }];
        }),
      ) as Record<Runtime, { p50: number; runs: number[] }>,
    };
  } catch (error) {
    return { measured: false, reason: error instanceof Error ? error.message : String(error) };
  } finally {
    tts?.close();
    await Promise.all([...services.values()].map((service) => service.stop()));
  }
}

function round1(value: number): number {
  return round(value, 1);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { runs: { type: 'string' }, python: { type: 'string' } } });
  const result = await measurePiperAsUser({ runs: Number(values.runs ?? 5), ...(values.python ? { python: values.python } : {}) });
  console.log(JSON.stringify(result, null, 2));
  process.exitCode = result.measured ? 0 : 1;
}
