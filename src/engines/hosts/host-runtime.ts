import { isHostRequest, type HostReady, type HostReply } from './host-protocol.js';

/**
 * Child side of an engine host: answers one job at a time over IPC. The child exits as soon as the parent
 * disconnects, which is also what happens when the parent dies.
 */
// From the first moment (hosts warm up before they serve): a host whose parent is gone has nothing to do.
process.on('disconnect', () => process.exit(0));

export function serveJobs<Job, Result>(handle: (job: Job) => Result | Promise<Result>): void {
  const send = process.send?.bind(process);
  if (!send) {
    process.stderr.write('an engine host must be started by the parent with an IPC channel\n');
    process.exit(2);
  }
  if (!process.connected) process.exit(0);
  process.on('message', (message: unknown) => {
    if (!isHostRequest(message)) return;
    void answer(message.id, () => handle(message.job as Job)).then((reply) => send(reply));
  });
  send({ ready: true } satisfies HostReady);
}

async function answer<Result>(id: number, run: () => Result | Promise<Result>): Promise<HostReply<Result>> {
  try {
    return { id, ok: true, result: await run() };
  } catch (error) {
    return { id, ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}
