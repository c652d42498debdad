// Gives a host's freed native memory back to the system once its inferences are over. With ONNX Runtime's CPU
// memory arena off (see piper/model.ts), a run's buffers are freed to the C allocator when it ends. On jemalloc (the
// hosts' allocator where it is installed, host-options.ts), every arena's unused pages are purged at once
// (`arena.<all>.purge`): during a job its pages decay over seconds, so the next sentence reuses them, and at rest
// nothing waits for the decay. On glibc, which keeps them in its per-thread arenas (koffi runs each inference on a
// thread of its own), malloc_trim(0) hands every whole free page of every arena back. Done after a quiet spell,
// never between the runs of a burst, it costs the runs nothing. Where there is neither, nothing is trimmed.
import koffi from 'koffi';

/** Quiet this long after the last run ends before trimming: the next sentence of a job usually follows at once. */
const QUIET_MS = 250;

type Trim = () => void;

/** jemalloc's mallctl index for every arena at once (MALLCTL_ARENAS_ALL). */
const ALL_ARENAS = 4096;

/** The trim of the allocator this process runs on: jemalloc's where the host was started with it preloaded, else glibc's. */
function allocatorTrim(): Trim | undefined {
  if (process.platform !== 'linux') return undefined;
  const jemalloc = process.env.LD_PRELOAD?.split(':').find((file) => file.includes('libjemalloc'));
  try {
    if (jemalloc) {
      const mallctl = koffi.load(jemalloc).func('int mallctl(const char *name, void *oldp, void *oldlenp, void *newp, size_t newlen)') as (...args: unknown[]) => number;
      return () => void mallctl(`arena.${ALL_ARENAS}.purge`, null, null, null, 0);
    }
    const trim = koffi.load('libc.so.6').func('int malloc_trim(size_t pad)') as (pad: number) => number;
    return () => void trim(0);
  } catch {
    return undefined;
  }
}

export class IdleTrim {
  private running = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly trim: Trim | undefined = allocatorTrim();

  /** Around each run: `await idle.during(() => session.run(…))`. */
  async during<T>(run: () => Promise<T>): Promise<T> {
    this.running += 1;
    clearTimeout(this.timer);
    try {
      return await run();
    } finally {
      this.running -= 1;
      if (this.running === 0 && this.trim) {
        this.timer = setTimeout(() => this.trim?.(), QUIET_MS);
        this.timer.unref();
      }
    }
  }
}
