/**
 * items.map(fn) with at most `limit` calls running (only one until the first is done, with `firstAlone`), yielding
 * the results in order, each as soon as it and those before it are done; stops starting calls after a failure (and
 * when the consumer stops).
 */
export async function* mapInOrder<T, R>(items: readonly T[], limit: number, firstAlone: boolean, fn: (item: T) => Promise<R>): AsyncGenerator<R> {
  const results: Array<Promise<R>> = [];
  let running = 0;
  let stopped = false;
  const cap = () => (firstAlone && results.length === 1 && running > 0 ? 1 : limit);
  const launch = () => {
    while (!stopped && running < cap() && results.length < items.length) {
      running += 1;
      const result = fn(items[results.length] as T);
      results.push(result);
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
    for (let index = 0; index < items.length; index += 1) yield await (results[index] as Promise<R>);
  } finally {
    stopped = true;
  }
}
