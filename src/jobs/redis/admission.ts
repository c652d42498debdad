import type { Redis } from 'ioredis';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';

/**
 * Admission to the shared queue, one Lua script so that it is atomic across every API instance: the queue's room
 * (jobs waiting in BullMQ's lists plus admissions not yet added), the client's jobs in flight (CLIENT_MAX_JOBS) and
 * its characters this window (CLIENT_CHARACTERS_PER_WINDOW), counted in Redis, so N instances hold a client to
 * one share, not N. A job admitted is a member of its client's set until it finishes (any instance or worker
 * removes it) or, should every process that knew it die, until its expiry.
 *
 * KEYS: wait list, prioritized set, delayed set, pending adds, the client's jobs, the client's characters.
 * ARGV: job id, now, expiry of the job's membership, queue length, max jobs (0: none), characters, max characters (0: none), window ms.
 * Returns {0} admitted, {1, waiting} queue full, {2} too many jobs, {3, ms left} too many characters.
 */
const ADMIT = `
local now = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
local waiting = redis.call('LLEN', KEYS[1]) + redis.call('ZCARD', KEYS[2]) + redis.call('ZCARD', KEYS[3]) + redis.call('ZCARD', KEYS[4])
if waiting >= tonumber(ARGV[4]) then return {1, waiting} end
local maxJobs = tonumber(ARGV[5])
if maxJobs > 0 and redis.call('ZCARD', KEYS[5]) >= maxJobs then return {2, 0} end
local characters = tonumber(ARGV[6])
local maxCharacters = tonumber(ARGV[7])
if maxCharacters > 0 then
  local used = tonumber(redis.call('GET', KEYS[6]) or '0')
  if used + characters > maxCharacters then return {3, redis.call('PTTL', KEYS[6])} end
  local total = redis.call('INCRBY', KEYS[6], characters)
  if total == characters then redis.call('PEXPIRE', KEYS[6], tonumber(ARGV[8])) end
end
redis.call('ZADD', KEYS[4], now + 30000, ARGV[1])
redis.call('ZADD', KEYS[5], tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[5], tonumber(ARGV[3]) - now)
return {0, 0}
`;

export interface AdmissionLimits {
  queueLength: number;
  maxJobs: number;
  maxCharacters: number;
  windowMs: number;
}

/** The keys of the queue's lists that admission counts, and the prefix of its own. */
export interface AdmissionKeys {
  wait: string;
  prioritized: string;
  delayed: string;
  /** Everything of admission's own, beside the queue's keys (QUEUE_NAME, so a hash tag keeps it in the slot). */
  prefix: string;
}

/** Admission's keys for a queue: BullMQ's lists under its default prefix, and its own beside them. */
export function admissionKeys(queueName: string): AdmissionKeys {
  return { wait: `bull:${queueName}:wait`, prioritized: `bull:${queueName}:prioritized`, delayed: `bull:${queueName}:delayed`, prefix: queueName };
}

/** The limits admission holds clients to, from the configuration. */
export function admissionLimits(config: Pick<Config, 'queueLength' | 'clientQuota' | 'rateLimit'>): AdmissionLimits {
  return { queueLength: config.queueLength, maxJobs: config.clientQuota.maxJobs, maxCharacters: config.clientQuota.characters, windowMs: config.rateLimit.windowMs };
}

export type Refusal = { kind: 'queue-full'; waiting: number } | { kind: 'jobs' } | { kind: 'characters'; retryAfterMs: number };

export class SharedAdmission {
  constructor(
    private readonly redis: Redis,
    private readonly keys: AdmissionKeys,
    private readonly limits: AdmissionLimits,
  ) {}

  /** Admits job `id` of `clientId` or refuses it; `holdMs`: how long at most it may be in flight (its membership's expiry). */
  async admit(id: string, clientId: string, characters: number, holdMs: number): Promise<Refusal | undefined> {
    const now = Date.now();
    const { queueLength, maxJobs, maxCharacters, windowMs } = this.limits;
    const keys = [this.keys.wait, this.keys.prioritized, this.keys.delayed, this.pendingKey, this.jobsKey(clientId), this.charactersKey(clientId)];
    const args = [id, now, now + holdMs, queueLength, maxJobs, characters, maxCharacters, windowMs];
    const [code, value] = (await this.redis.eval(ADMIT, keys.length, ...keys, ...args)) as [number, number];
    if (code === 1) return { kind: 'queue-full', waiting: value };
    if (code === 2) return { kind: 'jobs' };
    if (code === 3) return { kind: 'characters', retryAfterMs: Math.max(1000, value) };
    return undefined;
  }

  /** The job is in BullMQ's lists now (or failed to get there): it no longer counts as a pending add. */
  async added(id: string): Promise<void> {
    await this.redis.zrem(this.pendingKey, id);
  }

  /** The job finished, was cancelled or never got queued: its client's slot is free. */
  async release(id: string, clientId: string): Promise<void> {
    await this.redis.zrem(this.jobsKey(clientId), id);
  }

  private get pendingKey(): string {
    return `${this.keys.prefix}:admitting`;
  }

  private jobsKey(clientId: string): string {
    return `${this.keys.prefix}:client-jobs:${clientId}`;
  }

  private charactersKey(clientId: string): string {
    return `${this.keys.prefix}:client-characters:${clientId}`;
  }
}

/** A refusal as the API says it. */
export function refusalError(refusal: Refusal, limits: AdmissionLimits, retryAfterSeconds: number): AppError {
  if (refusal.kind === 'queue-full') return new AppError('OVERLOADED', { retryAfter: retryAfterSeconds });
  if (refusal.kind === 'jobs') {
    return new AppError('RATE_LIMITED', { message: `At most ${limits.maxJobs} jobs per client may run or wait at once; retry when one has finished.`, retryAfter: 1 });
  }
  return new AppError('RATE_LIMITED', {
    message: `At most ${limits.maxCharacters} characters per client may be submitted every ${limits.windowMs / 1000} s.`,
    retryAfter: Math.ceil(refusal.retryAfterMs / 1000),
  });
}
