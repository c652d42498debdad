import { fixture } from '../helpers/fixtures.js';
import { describe, expect, it } from 'vitest';
import { ProcessError, runPipeline, runProcess, TailBuffer } from '../../src/media/process.js';
import { descendantsOf, isAlive, processesMatching } from '../helpers/process-table.js';

const node = process.execPath;
/** This process's children running this fixture (runProcess does not expose the PID). */
const runningFixture = (name: string) => processesMatching(fixture(name), descendantsOf(process.pid));

async function failureOf(promise: Promise<unknown>): Promise<ProcessError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ProcessError);
  return error as ProcessError;
}


describe('runProcess', () => {
  it('passes stdin through and collects stdout', async () => {
    const { stdout, stderr } = await runProcess(node, [fixture('echo.mjs')], { input: 'héllo\n' });
    expect(stdout.toString('utf8')).toBe('héllo\n');
    expect(stderr).toBe('');
  });

  it('fails with the exit code and the end of stderr', async () => {
    const error = await failureOf(runProcess(node, [fixture('exit-with-error.mjs'), '7']));
    expect(error).toMatchObject({ exitCode: 7, signal: null, timedOut: false, isCanceled: false });
    expect(error.stderrTail).toContain('something went wrong');
    expect(error.message).toContain('exited with code 7');
  });

  it('reports a crash by its signal', async () => {
    const aborted = await failureOf(runProcess(node, [fixture('crash.mjs')]));
    expect(aborted).toMatchObject({ exitCode: null, signal: 'SIGABRT', timedOut: false });
    const segfault = await failureOf(runProcess(node, [fixture('crash.mjs'), 'segfault']));
    expect(segfault).toMatchObject({ exitCode: null, signal: 'SIGSEGV' });
    expect(segfault.stderrTail).toContain('about to crash');
  });

  it('keeps only a bounded tail of garbage output', async () => {
    const { stdout, stderr } = await runProcess(node, [fixture('garbage.mjs')]);
    expect(stdout.length).toBe(64 * 1024);
    expect(Buffer.byteLength(stderr)).toBeLessThanOrEqual(4096 * 3);
    expect(stderr).toContain('end of garbage');
  });

  it('stops a hanging program with SIGTERM at the timeout', async () => {
    const started = Date.now();
    const error = await failureOf(runProcess(node, [fixture('hang.mjs')], { timeoutMs: 500 }));
    expect(error).toMatchObject({ timedOut: true, isCanceled: false, signal: 'SIGTERM' });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('escalates to SIGKILL when SIGTERM is ignored', async () => {
    const started = Date.now();
    const error = await failureOf(runProcess(node, [fixture('ignore-sigterm.mjs')], { timeoutMs: 1000, killGraceMs: 500 }));
    expect(error).toMatchObject({ timedOut: true, signal: 'SIGKILL' });
    expect(error.stderrTail).toContain('ignoring SIGTERM');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
  });

  it('stops the program when the signal aborts', async () => {
    const controller = new AbortController();
    const running = runProcess(node, [fixture('hang.mjs')], { signal: controller.signal });
    await expect.poll(() => runningFixture('hang.mjs')).toHaveLength(1);
    controller.abort();
    const error = await failureOf(running);
    expect(error).toMatchObject({ isCanceled: true, timedOut: false, signal: 'SIGTERM' });
  });

  it('does not run anything for an already aborted signal', async () => {
    const error = await failureOf(runProcess(node, [fixture('hang.mjs')], { signal: AbortSignal.abort() }));
    expect(error.isCanceled).toBe(true);
  });

  it('fails cleanly when the program does not exist', async () => {
    const error = await failureOf(runProcess('/nonexistent/voxreel-no-such-program', []));
    expect(error).toMatchObject({ timedOut: false, isCanceled: false });
    expect(error.cause).toMatchObject({ code: 'ENOENT' });
  });

  it('leaves no process behind after a timeout', async () => {
    const running = runProcess(node, [fixture('ignore-sigterm.mjs')], { timeoutMs: 800, killGraceMs: 200 });
    await expect.poll(() => runningFixture('ignore-sigterm.mjs')).toHaveLength(1);
    const pid = runningFixture('ignore-sigterm.mjs')[0]?.pid ?? 0;
    expect(pid).toBeGreaterThan(0);
    await failureOf(running);
    expect(isAlive(pid)).toBe(false);
  });
});

describe('runPipeline', () => {
  const script = (code: string) => ({ command: node, args: ['-e', code] });
  /** Writes 64 KiB blocks until its stdout breaks. */
  const endlessWriter = script('const block = Buffer.alloc(65536, 7); (function write() { process.stdout.write(block, write); })();');
  const echo = { command: node, args: [fixture('echo.mjs')] };

  it("pipes the first program's output into the second, and the input into the first", async () => {
    const input = Buffer.alloc(3 * 1024 * 1024, 'voxreel ');
    const [first, second] = await runPipeline([echo, echo], { input });
    expect(first?.stdout.length).toBe(0);
    expect(second?.stdout.equals(input)).toBe(true);
  });

  it('runs three stages, the input given later (a promise): the programs start first and wait for it', async () => {
    const input = Buffer.alloc(256 * 1024, 'later ');
    let release: (data: Buffer) => void = () => undefined;
    const running = runPipeline([echo, echo, echo], { input: new Promise<Buffer>((resolve) => (release = resolve)) });
    await expect.poll(() => runningFixture('echo.mjs')).toHaveLength(3);
    release(input);
    const results = await running;
    expect(results.map((result) => result.stdout.length)).toEqual([0, 0, input.length]);
    expect(results[2]?.stdout.equals(input)).toBe(true);
  });

  it('kills the first program when its promised input fails, rather than letting it finish on an empty one', async () => {
    let fail: (error: Error) => void = () => undefined;
    const running = runPipeline([echo, echo], { input: new Promise<Buffer>((_, reject) => (fail = reject)) });
    await expect.poll(() => runningFixture('echo.mjs')).toHaveLength(2);
    fail(new Error('no samples'));
    expect(await failureOf(running)).toMatchObject({ signal: 'SIGKILL' });
    await expect.poll(() => runningFixture('echo.mjs')).toHaveLength(0);
  });

  it('fails with the first program when it fails, although the second read a clean end of input', async () => {
    const error = await failureOf(runPipeline([script('process.stdout.write("half a soundtrack"); process.exitCode = 3;'), echo]));
    expect(error).toMatchObject({ exitCode: 3, command: node });
  });

  it('fails, without hanging, when the second stops reading: the first meets a broken pipe', async () => {
    const started = Date.now();
    const error = await failureOf(runPipeline([endlessWriter, { command: node, args: [fixture('exit-with-error.mjs'), '5'] }], { timeoutMs: 20_000 }));
    expect([5, 1]).toContain(error.exitCode);
    expect(error.timedOut).toBe(false);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('stops both when the signal aborts, and leaves neither behind', async () => {
    const controller = new AbortController();
    const hang = { command: node, args: [fixture('hang.mjs')] };
    const running = runPipeline([hang, hang], { signal: controller.signal });
    await expect.poll(() => runningFixture('hang.mjs')).toHaveLength(2);
    controller.abort();
    expect(await failureOf(running)).toMatchObject({ isCanceled: true });
    await expect.poll(() => runningFixture('hang.mjs')).toHaveLength(0);
  });
});

describe('TailBuffer', () => {
  it('keeps the last bytes', () => {
    const tail = new TailBuffer(10);
    tail.push('0123456789');
    tail.push('abcdef');
    expect(tail.toString()).toBe('6789abcdef');
  });
});
