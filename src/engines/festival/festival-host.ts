import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../../errors.js';
import { ProcessError, supervise, TailBuffer, tiedToParent, type ProcessLimits, type Supervision } from '../../media/process.js';
import { awaitReady, ExitListeners, whenExited, type ExitStatus } from '../hosts/child-exit.js';
import { decodeWav, type PcmAudio } from '../wav.js';
import { jobFailure, type EngineHost } from '../hosts/host-pool.js';

const DEFAULT_START_TIMEOUT_MS = 30_000;
const MARKER = 'VOXREEL';

/** A token as Festival said it: its text (punctuation stripped) and when its words were spoken. */
export interface FestivalToken {
  name: string;
  start: number;
  end: number;
}

export interface FestivalSpeech extends PcmAudio {
  tokens: FestivalToken[];
}

/** A Scheme string literal: SIOD only gives backslash and double quote a meaning inside one. */
export function schemeString(value: string): string {
  return `"${value.replace(/["\\]/g, (char) => `\\${char}`)}"`;
}

// tts_file splits the text into utterances as text2wave does (one utterance for a long text is much slower),
// the hook appends each utterance's wave and writes its tokens with times shifted by the speech before it.
// Markers go to stderr: Festival's stdout is block-buffered when it is not a terminal.
const PRELUDE = `
(define (voxreel-collect utt)
  (let ((token (utt.relation.first utt 'Token))
        (wave (utt.wave utt)))
    (while token
      (let ((start -1) (end -1))
        (mapcar
          (lambda (word)
            (let ((word-start (item.feat word "word_start")) (word-end (item.feat word "word_end")))
              (if (> word-end word-start)
                (begin
                  (if (or (< start 0) (< word-start start)) (set! start word-start))
                  (if (> word-end end) (set! end word-end))))))
          (item.daughters token))
        (if (>= start 0)
          (format voxreel-words "%f\\t%f\\t%s\\n" (+ voxreel-offset start) (+ voxreel-offset end) (item.name token))))
      (set! token (item.next token)))
    (set! voxreel-offset
      (+ voxreel-offset (/ (cadr (assoc 'num_samples (wave.info wave))) (cadr (assoc 'sample_rate (wave.info wave))))))
    (if voxreel-wave (wave.append voxreel-wave wave) (set! voxreel-wave wave))
    utt))
(define (voxreel-synth id text-file wave-file words-file)
  (set! voxreel-wave nil)
  (set! voxreel-offset 0)
  (set! voxreel-words (fopen words-file "w"))
  (set! tts_hooks (list utt.synth voxreel-collect))
  (tts_file text-file nil)
  (fclose voxreel-words)
  (if voxreel-wave (wave.save voxreel-wave wave-file 'riff))
  (format stderr "\\n${MARKER}-DONE %s\\n" id))
`;

export interface FestivalHostOptions {
  festivalPath: string;
  /** Scheme that selects the voice, e.g. `(voice_cmu_us_slt_arctic_hts)`. */
  voiceCommand: string;
  /** Of the voice: for the empty speech of a text without words, when Festival writes no wave at all. */
  sampleRate: number;
  /** Where the text, wave and word files of each job go; default the OS temp dir. */
  tempDir?: string;
  startTimeoutMs?: number;
}

/**
 * One persistent `festival --pipe` process: the voice is loaded once (~0.2 s saved per call), text goes through
 * a temporary file (never through Scheme or a shell), results come back as files.
 */
export class FestivalHost implements EngineHost<string, FestivalSpeech> {
  private readonly stderr = new TailBuffer();
  private readonly exited: Promise<ExitStatus>;
  private readonly exitListeners: ExitListeners;
  private lineBuffer = '';
  private onLine: ((line: string) => void) | undefined;
  private busy = false;
  private killed = false;
  private nextId = 1;

  private constructor(
    private readonly child: ChildProcess,
    private readonly options: FestivalHostOptions,
  ) {
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => this.receive(chunk));
    child.stdin?.on('error', () => {
      // EPIPE once Festival is gone; its exit is what reports the failure.
    });
    child.on('error', (error) => this.stderr.push(`${error.message}\n`));
    this.exited = whenExited(child);
    this.exitListeners = new ExitListeners(this.exited);
  }

  static start(options: FestivalHostOptions): Promise<FestivalHost> {
    const tied = tiedToParent(options.festivalPath, ['--pipe']);
    const child = spawn(tied.command, tied.args, { stdio: ['pipe', 'ignore', 'pipe'] });
    const host = new FestivalHost(child, options);
    const ready = awaitReady({
      child,
      exited: host.exited,
      timeoutMs: options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
      listen: (onReady) => {
        host.onLine = (line) => {
          if (line === `${MARKER}-READY`) onReady();
        };
        return () => {
          host.onLine = undefined;
        };
      },
      failure: (reason, status) => host.failure(reason, status),
      value: host,
    });
    child.stdin?.write(`${PRELUDE}\n${options.voiceCommand}\n(format stderr "\\n${MARKER}-READY\\n")\n`);
    return ready;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get available(): boolean {
    return !this.busy && !this.killed && this.child.exitCode === null && this.child.signalCode === null;
  }

  async run(text: string, limits: ProcessLimits): Promise<FestivalSpeech> {
    if (!this.available) throw new AppError('ENGINE_FAILED', { message: 'The Festival process is not available.' });
    this.busy = true;
    const directory = await mkdtemp(join(this.options.tempDir ?? tmpdir(), 'voxreel-festival-'));
    const files = {
      text: join(directory, 'text.txt'),
      wave: join(directory, 'speech.wav'),
      words: join(directory, 'words.tsv'),
    };
    try {
      await writeFile(files.text, text);
      const id = String(this.nextId++);
      await this.command(
        id,
        `(voxreel-synth "${id}" ${schemeString(files.text)} ${schemeString(files.wave)} ${schemeString(files.words)})`,
        limits,
      );
      const [wave, words] = await Promise.all([
        readFile(files.wave).catch(ifMissing(undefined)),
        readFile(files.words, 'utf8'),
      ]);
      const audio = wave ? decodeWav(wave) : { samples: new Int16Array(0), sampleRate: this.options.sampleRate };
      return { ...audio, tokens: parseTokens(words) };
    } catch (error) {
      // Anything else (temporary files, a missing or unreadable result) leaves this Festival in an unknown state.
      if (!(error instanceof AppError)) {
        this.killed = true;
        this.child.kill('SIGKILL');
        throw new AppError('ENGINE_FAILED', { cause: error });
      }
      throw error;
    } finally {
      this.busy = false;
      await rm(directory, { recursive: true, force: true });
    }
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) {
      await this.exited;
      return;
    }
    const supervision = supervise(this.child, { signal: AbortSignal.abort() });
    await this.exited;
    supervision.release();
  }

  /** Sends one command and waits for its DONE marker, or for the process to end. */
  private command(id: string, scheme: string, limits: ProcessLimits): Promise<void> {
    const supervision = supervise(this.child, limits);
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const done = () => {
        settled = true;
        removeExitListener();
        this.onLine = undefined;
        supervision.release();
        // An answer can cross the timeout or the abort: the process is being killed all the same.
        if (supervision.timedOut || supervision.isCanceled) this.killed = true;
      };
      const removeExitListener = this.exitListeners.add((status) => {
        if (settled) return;
        done();
        reject(jobFailure(supervision, this.failure('exited during a job', status, supervision)));
      });
      this.onLine = (line) => {
        if (line !== `${MARKER}-DONE ${id}`) return;
        done();
        resolve();
      };
      // On a Scheme error Festival skips the rest of the command: no DONE marker, so report it and stop the process.
      this.child.stdin?.write(`(unwind-protect ${scheme} (begin (format stderr "\\n${MARKER}-FAILED\\n") (quit)))\n`);
    });
  }

  private receive(chunk: string): void {
    this.stderr.push(chunk);
    this.lineBuffer += chunk;
    const lines = this.lineBuffer.split('\n');
    this.lineBuffer = lines.pop() ?? '';
    for (const line of lines) this.onLine?.(line.trim());
  }

  private failure(reason: string, status: ExitStatus, supervision?: Supervision): ProcessError {
    return new ProcessError({
      command: `${this.options.festivalPath} (${reason})`,
      exitCode: status.exitCode,
      signal: status.signal,
      timedOut: supervision?.timedOut ?? false,
      isCanceled: supervision?.isCanceled ?? false,
      cancelReason: supervision?.cancelReason,
      stderrTail: this.stderr.toString(),
    });
  }
}

function ifMissing<T>(fallback: T): (error: unknown) => T {
  return (error) => {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return fallback;
    throw error;
  };
}

/** Lines of `start<TAB>end<TAB>name`; Festival writes names byte for byte, and the text file was UTF-8. */
function parseTokens(file: string): FestivalToken[] {
  return file.split('\n').flatMap((line) => {
    const [start, end, ...name] = line.split('\t');
    const token = { name: name.join('\t'), start: Number(start), end: Number(end) };
    return token.name && Number.isFinite(token.start) && Number.isFinite(token.end) ? [token] : [];
  });
}
