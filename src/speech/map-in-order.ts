/**
 * items.map(fn) with at most `limit` calls running (only one until the first is done, with `firstAlone`), yielding
 * the results in order, each as soon as it and those before it are done; stops starting calls after a failure (and
 * when the consumer stops). At most `limit` results are ever ahead of the consumer, and none is kept once yielded:
 * however long the list, memory holds a few results (a long job's sentences), not all of them.
 */
export async function* mapInOrder<T, R>(items: readonly T[], limit: number, firstAlone: boolean, fn: (item: T) => Promise<R>): AsyncGenerator<R> {
  const pending = new Map<number, Promise<R>>();
  let started = 0;
  let taken = 0;
  let running = 0;
  let stopped = false;
  const cap = () => (firstAlone && started === 1 && running > 0 ? 1 : limit);
  const launch = () => {
    while (!stopped && running < cap() && started < items.length && started < taken + limit) {
      running += 1;
      const result = fn(items[started] as T);
      pending.set(started, result);
      started += 1;
      result.then(
        () => {
          running -= 1;
          launch();
        },
        () => {
          stopped = true;
        },
      );
    }
  };
  launch();
  try {
    // Calls start in order and stop at a failure, so the loop meets the failure before any call not started.
    for (let index = 0; index < items.length; index += 1) {
      const result = await (pending.get(index) as Promise<R>);
      pending.delete(index);
      taken = index + 1;
      launch();
      yield result;
    }
  } finally {
    stopped = true;
  }
}
