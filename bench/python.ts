// The benchmark's Python side: virtual environments of their own (nothing of them ships in voxreel), and a Python
// script kept running that answers one JSON line with one JSON line (piper-tts, the Wyoming client).
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';

/** The Python of a virtual environment at `venv` that can import `modules` (made, with `requirement` installed, when it cannot). */
export async function pythonWith(venv: string, requirement: string, modules: string): Promise<string> {
  const python = path.join(venv, 'bin', 'python');
  const run = promisify(execFile);
  if (existsSync(python) && (await run(python, ['-c', `import ${modules}`]).then(() => true, () => false))) return python;
  await run('python3', ['-m', 'venv', venv]);
  await run(path.join(venv, 'bin', 'pip'), ['install', '--quiet', requirement], { timeout: 600_000 });
  return python;
}

/** `python -c script args…`: each request a JSON line on its stdin, each answer the next JSON line on its stdout. */
export class PythonLines {
  private readonly lines: AsyncIterator<string>;
  private stderr = '';

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly name: string,
  ) {
    this.lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    child.stderr.on('data', (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString()).slice(-2000)));
  }

  /** `ready`: the script prints one line once it is set up (a model loaded), waited for here. */
  static async start(python: string, script: string, args: readonly string[], options: { name: string; ready?: boolean }): Promise<PythonLines> {
    const lines = new PythonLines(spawn(python, ['-c', script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] }), options.name);
    if (options.ready) await lines.next('did not start');
    return lines;
  }

  async ask<T>(request: unknown): Promise<T> {
    this.child.stdin.write(`${JSON.stringify(request)}\n`);
    return JSON.parse(await this.next('stopped')) as T;
  }

  close(): void {
    this.child.stdin.end();
    this.child.kill();
  }

  private async next(failure: string): Promise<string> {
    const line = await this.lines.next();
    if (line.done) throw new Error(`${this.name} ${failure}: ${this.stderr.trim() || 'no output'}`);
    return line.value;
  }
}
