/**
 * voxreel's Wyoming server against PyPI's wyoming-piper 2.5.2 (how most Piper voices reach Home Assistant), serving
 * the same en_US-joe-medium, measured by the real client (PyPI wyoming, AsyncTcpClient) as Home Assistant asks: a
 * `synthesize` event, then the time to the first `audio-chunk` and to `audio-stop`, for a short and a long text,
 * the two servers alternated, one untimed round first. wyoming-piper lives in a virtual environment of its own
 * (installWyomingPiper); nothing of it ships in voxreel.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Socket } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/redis-server.js';
import { pythonWith, PythonLines } from './python.js';
import { startService } from './service.js';
import { runtimeEnv, type Runtime } from './runtimes.js';
import { round, timings, type Timings } from './stats.js';
import { narrationOf } from './texts.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const VENV = '/tmp/wyoming-piper-venv';
const REQUIREMENT = 'wyoming-piper==2.5.2';
const VOICE = 'en_US-joe-medium';
const SHORT_TEXT = 'Turning on the kitchen lights.';

/** One JSON line in (host, port, voice, text), one out: seconds to the first audio chunk and to audio-stop. */
const CLIENT = String.raw`
import asyncio, json, sys, time
from wyoming.audio import AudioChunk, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.tts import Synthesize, SynthesizeVoice
async def once(ask):
    async with AsyncTcpClient(ask["host"], ask["port"]) as client:
        start = time.perf_counter()
        await client.write_event(Synthesize(text=ask["text"], voice=SynthesizeVoice(name=ask["voice"])).event())
        first, samples, rate = None, 0, 1
        while True:
            event = await asyncio.wait_for(client.read_event(), timeout=120)
            if event is None:
                raise RuntimeError("the server closed the connection")
            if AudioChunk.is_type(event.type):
                chunk = AudioChunk.from_event(event)
                first = first if first is not None else time.perf_counter() - start
                samples, rate = samples + chunk.samples, chunk.rate
            elif AudioStop.is_type(event.type):
                return {"firstSeconds": first, "seconds": time.perf_counter() - start, "audioSeconds": samples / rate}
            elif event.type == "error":
                raise RuntimeError(str(event.data))
for line in sys.stdin:
    print(json.dumps(asyncio.run(once(json.loads(line)))), flush=True)
`;

export interface WyomingRow {
  text: 'short' | 'long';
  characters: number;
  audioSeconds: number;
  /** voxreel on ONNX Runtime 1.32 (PyPI, as set up) and on 1.30 (npm, the fallback). */
  voxreel: { firstMs: Timings; totalMs: Timings };
  voxreelNpm: { firstMs: Timings; totalMs: Timings };
  wyomingPiper: { firstMs: Timings; totalMs: Timings };
}

export type WyomingComparison = { measured: true; voice: string; rows: WyomingRow[] } | { measured: false; reason: string };

/** The virtual environment with wyoming-piper (and with it piper-tts and the wyoming client); made when missing. */
export function installWyomingPiper(venv = VENV): Promise<string> {
  return pythonWith(venv, REQUIREMENT, 'wyoming_piper, wyoming');
}

/** Resolves once something accepts connections on the port. */
async function listening(port: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
      socket.connect(port, '127.0.0.1');
    });
    if (open) return;
    if (Date.now() > until) throw new Error(`nothing listens on port ${port} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function compareWyoming(options: { python: string; runs: number; seconds: number }): Promise<WyomingComparison> {
  const voicesDir = path.join(ROOT, 'voices');
  if (!existsSync(path.join(voicesDir, `${VOICE}.onnx`))) return { measured: false, reason: `${VOICE} is not installed in ${voicesDir}` };
  const [voxreelPort, npmPort, piperPort] = [await freePort(), await freePort(), await freePort()];
  const serve = (port: number, runtime: Runtime) => startService({ WYOMING_PORT: String(port), WARM_VOICE: `piper:${VOICE}`, ...runtimeEnv(runtime) });
  const services = [await serve(voxreelPort, 'pypi'), await serve(npmPort, 'npm')];
  const wyomingPiper = spawn(options.python, ['-m', 'wyoming_piper', '--voice', VOICE, '--data-dir', voicesDir, '--uri', `tcp://127.0.0.1:${piperPort}`, '--local-files-only'], { stdio: 'ignore' });
  const client = await PythonLines.start(options.python, CLIENT, [], { name: 'the Wyoming client' });
  try {
    await Promise.all([voxreelPort, npmPort, piperPort].map((port) => listening(port, 60_000)));
    const texts = { short: SHORT_TEXT, long: narrationOf(options.seconds) };
    const sides = {
      voxreel: { port: voxreelPort, voice: `piper:${VOICE}` },
      voxreelNpm: { port: npmPort, voice: `piper:${VOICE}` },
      wyomingPiper: { port: piperPort, voice: VOICE },
    } as const;
    const names = Object.keys(sides) as Array<keyof typeof sides>;
    const measured = {
      short: { voxreel: [] as Answer[], voxreelNpm: [] as Answer[], wyomingPiper: [] as Answer[] },
      long: { voxreel: [] as Answer[], voxreelNpm: [] as Answer[], wyomingPiper: [] as Answer[] },
    };
    for (let run = -1; run < options.runs; run += 1) {
      for (const kind of ['short', 'long'] as const) {
        // The sides take turns going first, so none always follows another's load.
        const order = names.map((_, turn) => names[(Math.max(run, 0) + turn) % names.length] as keyof typeof sides);
        for (const side of order) {
          const answer = await client.ask<Answer>({ host: '127.0.0.1', port: sides[side].port, voice: sides[side].voice, text: texts[kind] });
          if (run >= 0) measured[kind][side].push(answer);
        }
      }
    }
    const summary = (answers: Answer[]) => ({ firstMs: timings(answers.map((answer) => answer.firstSeconds * 1000)), totalMs: timings(answers.map((answer) => answer.seconds * 1000)) });
    const rows = (['short', 'long'] as const).map((kind) => ({
      text: kind,
      characters: texts[kind].length,
      audioSeconds: round(measured[kind].voxreel[0]?.audioSeconds ?? 0, 1),
      voxreel: summary(measured[kind].voxreel),
      voxreelNpm: summary(measured[kind].voxreelNpm),
      wyomingPiper: summary(measured[kind].wyomingPiper),
    }));
    for (const row of rows) {
      console.log(
        `  Wyoming, ${row.text} text: first chunk voxreel ${row.voxreel.firstMs.p50} ms (on npm's runtime ${row.voxreelNpm.firstMs.p50} ms), wyoming-piper ${row.wyomingPiper.firstMs.p50} ms; ` +
          `whole voxreel ${row.voxreel.totalMs.p50} ms, wyoming-piper ${row.wyomingPiper.totalMs.p50} ms`,
      );
    }
    return { measured: true, voice: VOICE, rows };
  } finally {
    client.close();
    wyomingPiper.kill();
    await Promise.all(services.map((service) => service.stop()));
  }
}

type Answer = { firstSeconds: number; seconds: number; audioSeconds: number };
