// Gives a host's freed native memory back to the system once its inferences are over. With ONNX Runtime's CPU
// memory arena off (see piper/model.ts), a run's buffers are freed to glibc's allocator when it ends, and glibc keeps
// them in its per-thread arenas (koffi runs each inference on a thread of its own); malloc_trim(0) hands every whole
// free page of every arena back. Done after a quiet spell, never between the runs of a burst, it costs the runs
// nothing. Where there is no glibc (another libc, another platform), nothing is trimmed; in a host on jemalloc
// (host-options.ts), glibc's arenas hold next to nothing and jemalloc gives back what it freed by itself.
import koffi from 'koffi';

/** Quiet this long after the last run ends before trimming: the next sentence of a job usually follows at once. */
const QUIET_MS = 250;

type Trim = (pad: number) => number;

function glibcTrim(): Trim | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    return koffi.load('libc.so.6').func('int malloc_trim(size_t pad)') as Trim;
  } catch {
    return undefined;
  }
}

export class IdleTrim {
  private running = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly trim: Trim | undefined = glibcTrim();

  /** Around each run: `await idle.during(() => session.run(…))`. */
  async during<T>(run: () => Promise<T>): Promise<T> {
    this.running += 1;
    clearTimeout(this.timer);
    try {
      return await run();
    } finally {
      this.running -= 1;
      if (this.running === 0 && this.trim) {
        this.timer = setTimeout(() => this.trim?.(0), QUIET_MS);
        this.timer.unref();
      }
    }
  }
}
