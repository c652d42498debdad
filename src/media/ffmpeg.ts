import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import ffmpeg from 'fluent-ffmpeg';
import { ProcessError, runProcess, supervise, type ProcessLimits } from './process.js';
import type { MediaTools } from './tools.js';

export interface FfmpegInput {
  /** A file path, or a stream piped to ffmpeg's stdin (at most one input may be a stream). */
  source: string | Readable;
  options?: readonly string[];
}

export interface FfmpegJob extends ProcessLimits {
  inputs: readonly FfmpegInput[];
  /** `-filter_complex` graph; user text must never appear in it (pass text through files). */
  complexFilter?: string;
  /** Where a graph too long for one argument (a long video's frame lists) is written for `-filter_complex_script`. */
  scriptDir?: string;
  /** A file path, or a stream that gets ffmpeg's stdout as it is written (a format that needs no seeking); ended on success. */
  output: string | Writable;
  outputOptions: readonly string[];
  /** Further outputs of the same run (e.g. several encodes of one filter graph). */
  moreOutputs?: ReadonlyArray<{ output: string; outputOptions: readonly string[] }>;
}

export interface MediaStream {
  index: number;
  codecType: 'audio' | 'video' | string;
  codecName: string;
  duration: number | undefined;
  width?: number;
  height?: number;
  pixelFormat?: string;
  sampleRate?: number;
  channels?: number;
}

export interface MediaInfo {
  formatName: string;
  duration: number;
  size: number;
  streams: MediaStream[];
}

/** Longest graph passed as an argument; MAX_ARG_STRLEN is 128 KiB, and a graph is ASCII. */
const MAX_ARGUMENT_CHARACTERS = 64 * 1024;

/**
 * The one door to ffmpeg: fluent-ffmpeg underneath (the design card's choice), with our cancellation,
 * timeout escalation and ProcessError in place of its string errors.
 */
/**
 * Options handed to fluent-ffmpeg one by one: given an array, it splits each element that holds one space in two
 * ("-c copy"), which would cut a value that holds one (a path under a folder with a space, MP4's brand "M4B "); given
 * them as separate arguments it takes each as it is. (A lone option is a flag, which holds no space.)
 */
function asGiven(add: (...options: string[]) => unknown, options: readonly string[]): void {
  if (options.length > 0) add(...options);
}

export class Ffmpeg {
  private availability: Promise<boolean> | undefined;

  constructor(readonly tools: MediaTools) {}

  /** Whether both ffmpeg and ffprobe start; asked once. */
  available(): Promise<boolean> {
    this.availability ??= Promise.all(
      [this.tools.ffmpeg, this.tools.ffprobe].map((binary) => runProcess(binary, ['-version'], { timeoutMs: 10_000 })),
    ).then(
      () => true,
      () => false,
    );
    return this.availability;
  }

  async run(job: FfmpegJob): Promise<void> {
    // fluent-ffmpeg throws out of its own event handler when the binary cannot be started at all: ask first (once).
    if (!(await this.available())) throw this.failure({ stderrTail: `${this.tools.ffmpeg} or ${this.tools.ffprobe} cannot be run` });
    return this.start(job);
  }

  private start(job: FfmpegJob): Promise<void> {
    return new Promise((resolve, reject) => {
      if (job.signal?.aborted) {
        reject(this.failure({ isCanceled: true, cancelReason: job.signal.reason }));
        return;
      }
      // stdoutLines/stderrLines exist at run time but not in @types/fluent-ffmpeg.
      const options = { stdoutLines: 0, stderrLines: 40 } as ffmpeg.FfmpegCommandOptions;
      const command = ffmpeg(options).setFfmpegPath(this.tools.ffmpeg);
      for (const input of job.inputs) {
        command.input(input.source);
        asGiven((...given) => command.inputOptions(...given), input.options ?? []);
      }
      if (job.complexFilter && job.scriptDir && job.complexFilter.length > MAX_ARGUMENT_CHARACTERS) {
        // Linux takes no argument longer than 128 KiB (MAX_ARG_STRLEN): a longer graph goes through a file.
        const script = path.join(job.scriptDir, `filter-graph-${randomBytes(4).toString('hex')}.txt`);
        writeFileSync(script, job.complexFilter);
        asGiven((...given) => command.inputOptions(...given), ['-filter_complex_script', script]);
      } else if (job.complexFilter) command.complexFilter(job.complexFilter);
      const stream = typeof job.output === 'string' ? undefined : job.output;
      // Not ended by the pipe: fluent-ffmpeg takes the stream's 'close' for a failure, and ffmpeg's exit may come later.
      if (typeof job.output === 'string') command.output(job.output);
      else command.output(job.output, { end: false });
      asGiven((...given) => command.outputOptions(...given), ['-nostdin', '-hide_banner', ...job.outputOptions]);
      for (const more of job.moreOutputs ?? []) {
        command.output(more.output);
        asGiven((...given) => command.outputOptions(...given), more.outputOptions);
      }

      let supervision: ReturnType<typeof supervise> | undefined;
      let child: ChildProcess | undefined;
      let stdoutDone: Promise<void> = Promise.resolve();
      const onEarlyAbort = () => reject(this.failure({ isCanceled: true, cancelReason: job.signal?.reason }));
      job.signal?.addEventListener('abort', onEarlyAbort, { once: true });
      // fluent-ffmpeg may report a failure (a broken input stream) while ffmpeg still runs: stop it, and keep
      // supervising (SIGKILL follows SIGTERM) until it has exited.
      const settle = () => {
        job.signal?.removeEventListener('abort', onEarlyAbort);
        if (!child || child.exitCode !== null || child.signalCode !== null) {
          supervision?.release();
          return;
        }
        supervision?.terminate();
        child.once('exit', () => supervision?.release());
      };
      command.on('start', () => {
        job.signal?.removeEventListener('abort', onEarlyAbort);
        const started = (command as unknown as { ffmpegProc: ChildProcess }).ffmpegProc;
        child = started;
        supervision = supervise(started, job);
        // fluent-ffmpeg reports the end at exit, possibly before the last of stdout has been piped on.
        if (stream && started.stdout) stdoutDone = new Promise((done) => started.stdout?.once('close', done));
      });
      command.on('end', () => {
        settle();
        // Stopped, even if it then exited cleanly (a closed stdin can end it before the signal does): never a success.
        if (supervision?.isCanceled || supervision?.timedOut) {
          reject(this.failure({ isCanceled: supervision.isCanceled, timedOut: supervision.timedOut, cancelReason: supervision.cancelReason }));
          return;
        }
        void stdoutDone.then(() => {
          stream?.end();
          resolve();
        });
      });
      command.on('error', (error: Error, _stdout: string | null, stderr: string | null) => {
        settle();
        const killedBy = /killed with signal (\w+)/.exec(error.message)?.[1] as NodeJS.Signals | undefined;
        const exitCode = /exited with code (\d+)/.exec(error.message)?.[1];
        reject(
          this.failure({
            timedOut: supervision?.timedOut ?? false,
            isCanceled: supervision?.isCanceled ?? false,
            cancelReason: supervision?.cancelReason,
            signal: killedBy ?? null,
            exitCode: exitCode === undefined ? null : Number(exitCode),
            stderrTail: (stderr ?? '').trim(),
            cause: error,
          }),
        );
      });
      command.run();
    });
  }

  /** Reads container and stream facts with ffprobe. */
  async probe(file: string, limits: ProcessLimits = {}): Promise<MediaInfo> {
    const { stdout } = await runProcess(
      this.tools.ffprobe,
      ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file],
      { timeoutMs: 30_000, ...limits },
    );
    const data = JSON.parse(stdout.toString('utf8')) as {
      format: { format_name: string; duration?: string; size?: string };
      streams: Array<Record<string, string | number | undefined>>;
    };
    return {
      formatName: data.format.format_name,
      duration: Number(data.format.duration ?? Number.NaN),
      size: Number(data.format.size ?? 0),
      streams: data.streams.map((stream) => ({
        index: Number(stream.index),
        codecType: String(stream.codec_type),
        codecName: String(stream.codec_name),
        duration: stream.duration === undefined ? undefined : Number(stream.duration),
        width: stream.width === undefined ? undefined : Number(stream.width),
        height: stream.height === undefined ? undefined : Number(stream.height),
        pixelFormat: stream.pix_fmt === undefined ? undefined : String(stream.pix_fmt),
        sampleRate: stream.sample_rate === undefined ? undefined : Number(stream.sample_rate),
        channels: stream.channels === undefined ? undefined : Number(stream.channels),
      })),
    };
  }

  private failure(facts: Partial<ConstructorParameters<typeof ProcessError>[0]>): ProcessError {
    return new ProcessError({
      command: 'ffmpeg',
      exitCode: null,
      signal: null,
      timedOut: false,
      isCanceled: false,
      stderrTail: '',
      ...facts,
    });
  }
}
