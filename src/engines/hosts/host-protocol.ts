/** Messages between the parent and an engine host child over the IPC channel (advanced serialization). */

export interface HostReady {
  ready: true;
}

export interface HostRequest<Job> {
  id: number;
  job: Job;
}

export type HostReply<Result> = { id: number; ok: true; result: Result } | { id: number; ok: false; error: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

export function isHostReady(message: unknown): message is HostReady {
  return isRecord(message) && message.ready === true;
}

export function isHostRequest(message: unknown): message is HostRequest<unknown> {
  return isRecord(message) && typeof message.id === 'number' && 'job' in message;
}

export function isHostReply(message: unknown): message is HostReply<unknown> {
  if (!isRecord(message) || typeof message.id !== 'number') return false;
  return message.ok === true ? 'result' in message : message.ok === false && typeof message.error === 'string';
}
