import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { AppError, abortError } from '../../errors.js';
import { version } from '../../version.js';

/** What happened to the job a delivery reports on (sent as Voxreel-Event). */
export type WebhookEvent = 'job.succeeded' | 'job.failed' | 'job.cancelled' | 'job.progress';

export const SIGNATURE_HEADER = 'Voxreel-Signature';
export const EVENT_HEADER = 'Voxreel-Event';
export const DELIVERY_HEADER = 'Voxreel-Delivery';

const MAX_URL_LENGTH = 2048;
/** How far a signature's time may be from the receiver's clock: wider lets a captured delivery be replayed longer. */
const DEFAULT_TOLERANCE_SECONDS = 300;
const DEFAULT_ATTEMPTS = 6;
const DEFAULT_BASE_DELAY_MS = 1000;
const DEFAULT_TIMEOUT_MS = 10_000;
/** Longest wait between attempts, Retry-After included: a receiver cannot park a delivery for hours. */
const MAX_DELAY_MS = 5 * 60_000;
/** Nobody reads the answer; this much is read so a short reply ends cleanly, then the connection is dropped. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const USER_AGENT = `voxreel-webhook/${version}`;

/**
 * Addresses a webhook may not reach unless WEBHOOK_ALLOW_PRIVATE is set: this machine, the networks around it and
 * the cloud metadata service. Without this, anyone who may submit a job could make the server POST into them (SSRF).
 */
const PRIVATE_RANGES: ReadonlyArray<readonly [network: string, prefix: number, family: 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'], // "this network": 0.0.0.0 reaches this host on Linux
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'], // link-local, cloud metadata at 169.254.169.254 among them
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'], // IETF protocol assignments
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'], // benchmarking networks
  ['224.0.0.0', 4, 'ipv4'], // multicast
  ['240.0.0.0', 4, 'ipv4'], // reserved, broadcast among them
  ['::', 128, 'ipv6'], // unspecified
  ['::1', 128, 'ipv6'],
  ['fc00::', 7, 'ipv6'], // unique-local
  ['fe80::', 10, 'ipv6'], // link-local
  ['fec0::', 10, 'ipv6'], // site-local: deprecated, still routed on some networks
  ['ff00::', 8, 'ipv6'], // multicast
  ['64:ff9b:1::', 48, 'ipv6'], // local-use IPv4/IPv6 translation (RFC 8215): the operator's own NAT64, inside by definition
];

const privateAddresses = new BlockList();
for (const [network, prefix, family] of PRIVATE_RANGES) privateAddresses.addSubnet(network, prefix, family);

const privateAddressText =
  'a loopback, private, link-local or otherwise non-public address; such webhooks are refused unless WEBHOOK_ALLOW_PRIVATE is set.';

/**
 * IPv6 prefixes whose last 32 bits are an IPv4 address the packet may end up at: IPv4-compatible (deprecated,
 * ::a.b.c.d), IPv4-mapped, IPv4-translated (RFC 6145) and the well-known NAT64 prefix (RFC 6052).
 */
const IPV4_CARRYING_PREFIXES = new Set(['0:0:0:0:0:0', '0:0:0:0:0:ffff', '0:0:0:0:ffff:0', '64:ff9b:0:0:0:0']);
/** 6to4 (RFC 3056): 2002:AABB:CCDD::/48 leads to AA.BB.CC.DD. */
const SIX_TO_FOUR = 0x2002;
/** Teredo (RFC 4380): 2001:0::/32, the server's IPv4 in bits 32–63 and the client's, inverted, in the last 32. */
const TEREDO = [0x2001, 0x0000] as const;

export interface WebhookUrlOptions {
  allowPrivate: boolean;
  /** WEBHOOK_SECRET: without it deliveries cannot be signed, so no webhook is accepted. */
  secret?: string;
}

/**
 * Checks a job's `webhook_url` when the job is submitted, so a bad one is refused at once rather than failing
 * after the work is done. Names are not resolved here: `deliverWebhook` checks where they point on every attempt.
 */
export function checkWebhookUrl(raw: string, options: WebhookUrlOptions): URL {
  if (options.secret === undefined) {
    throw invalidUrl('Webhooks need WEBHOOK_SECRET, the key deliveries are signed with, and this server has none set.');
  }
  if (raw.length > MAX_URL_LENGTH) throw invalidUrl(`webhook_url is longer than ${MAX_URL_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidUrl('webhook_url is not a valid absolute URL.');
  }
  const problem = urlProblem(url) ?? (options.allowPrivate ? undefined : hostProblem(url));
  if (problem !== undefined) throw invalidUrl(problem);
  return url;
}

function invalidUrl(message: string): AppError {
  return new AppError('VALIDATION_ERROR', { field: 'webhook_url', message });
}

/** What rules a URL out wherever it points. */
function urlProblem(url: URL): string | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'webhook_url must be an http or https URL.';
  if (url.username !== '' || url.password !== '') return 'webhook_url must not contain a user name or password.';
  return undefined;
}

/** A host that is private by its very text: an address literal (in any form the URL parser normalises) or localhost. */
function hostProblem(url: URL): string | undefined {
  const host = bareHost(url).replace(/\.$/, '');
  const local = host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && isPrivateAddress(host));
  return local ? `webhook_url points to ${privateAddressText}` : undefined;
}

/** The URL's host as DNS and `isIP` take it: IPv6 literals without their brackets. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/%.*$/, ''); // a link-local zone index (fe80::1%eth0)
  const family = isIP(bare);
  if (family === 4) return privateAddresses.check(bare, 'ipv4');
  if (family !== 6) return false;
  return privateAddresses.check(bare, 'ipv6') || carriedIPv4(bare).some((carried) => privateAddresses.check(carried, 'ipv4'));
}

/**
 * The IPv4 addresses an IPv6 address leads to, whatever way it is written (::ffff:127.0.0.1, ::ffff:7f00:1,
 * ::127.0.0.1, 2002:7f00:1::): the packet may end up at any of them.
 */
function carriedIPv4(ipv6: string): string[] {
  const groups = ipv6Groups(ipv6);
  const [first = 0, second = 0, third = 0, fourth = 0, , , seventh = 0, eighth = 0] = groups.map((group) => parseInt(group, 16));
  const quad = (high: number, low: number) => [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  const carried: string[] = [];
  if (IPV4_CARRYING_PREFIXES.has(groups.slice(0, 6).join(':'))) carried.push(quad(seventh, eighth));
  if (first === SIX_TO_FOUR) carried.push(quad(second, third));
  if (first === TEREDO[0] && second === TEREDO[1]) carried.push(quad(third, fourth), quad(seventh ^ 0xffff, eighth ^ 0xffff));
  return carried;
}

/** The eight groups of an IPv6 address; the URL parser's canonical form has no dotted quad and no leading zeros. */
function ipv6Groups(ipv6: string): string[] {
  const canonical = new URL(`http://[${ipv6}]/`).hostname.slice(1, -1);
  const [head = '', tail] = canonical.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right];
}

/** The Voxreel-Signature header value: Stripe's scheme, so receivers can reuse what they know. */
export function signWebhook(secret: string, timestampSeconds: number, body: string): string {
  return `t=${timestampSeconds},v1=${hmacHex(secret, timestampSeconds, body)}`;
}

function hmacHex(secret: string, timestampSeconds: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}.${body}`).digest('hex');
}

export interface VerifyOptions {
  toleranceSeconds?: number;
  /** The receiver's clock, Unix seconds; the current time by default. */
  now?: number;
}

/**
 * Whether `header` signs exactly `body` (the raw text received, before any JSON parsing) with `secret`, at a time
 * within the tolerance of now: the time is signed too, so an old delivery cannot be replayed with a new one.
 */
export function verifyWebhookSignature(secret: string, header: string, body: string, options: VerifyOptions = {}): boolean {
  const parsed = parseSignatureHeader(header);
  if (parsed === undefined) return false;
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - parsed.timestamp) > (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) return false;
  const expected = Buffer.from(hmacHex(secret, parsed.timestamp, body), 'hex');
  return parsed.signatures.some((signature) => timingSafeEqual(Buffer.from(signature, 'hex'), expected));
}

/** `t=<seconds>,v1=<hex>`; several v1 are allowed (as Stripe does) so a secret can be rotated without a gap. */
function parseSignatureHeader(header: string): { timestamp: number; signatures: string[] } | undefined {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const [key, value = ''] = part.trim().split('=');
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    // Exactly 64 hex digits: timingSafeEqual needs equal lengths, and Buffer.from would drop bad hex silently.
    if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(value);
  }
  return timestamp === undefined || signatures.length === 0 ? undefined : { timestamp, signatures };
}

/** pino's shape, so the app's logger can be passed as it is. */
export interface WebhookLogger {
  warn(obj: object, msg: string): void;
}

export interface DeliveryOptions {
  secret: string;
  allowPrivate: boolean;
  event: WebhookEvent;
  /** Sent as Voxreel-Delivery, the same on every attempt so receivers can drop repeats; a new UUID by default. */
  deliveryId?: string;
  /** Attempts in all, the first included (default 6). */
  attempts?: number;
  /** Wait after the first failure, doubling after each (default 1000 ms, at most 5 minutes). */
  baseDelayMs?: number;
  /** Time for one attempt, from DNS to the end of the answer (default 10 s). */
  timeoutMs?: number;
  /** Aborting stops the delivery: `deliverWebhook` rejects with the signal's reason (see `abortError`). */
  signal?: AbortSignal;
  /** Runs each attempt (a connection): a gate that bounds attempts in flight; at once by default. */
  throttle?: <T>(attempt: () => Promise<T>) => Promise<T>;
  logger?: WebhookLogger;
}

export interface DeliveryResult {
  delivered: boolean;
  /** Attempts made, one refused before sending included. */
  attempts: number;
  /** The last answer's status, when there was one. */
  status?: number;
  deliveryId: string;
  /** Why the last attempt failed, for the job's record and logs. */
  error?: string;
}

/** What one attempt came to: delivered, worth another try later (after `retryAfterMs` when the receiver said), or final. */
export type AttemptOutcome =
  | { kind: 'delivered'; status: number }
  | { kind: 'retry'; status?: number; error: string; retryAfterMs?: number }
  | { kind: 'give-up'; status?: number; error: string };

interface Delivery {
  url: URL;
  body: string;
  deliveryId: string;
  options: DeliveryOptions;
  timeoutMs: number;
}

/**
 * POSTs `payload` as JSON to `url`, signed, retrying what may succeed later (no answer, 408, 429, 5xx) with
 * backoff. Never throws for the receiver's sake, only when `signal` aborts: the result says what happened.
 */
export async function deliverWebhook(url: URL, payload: unknown, options: DeliveryOptions): Promise<DeliveryResult> {
  const body = JSON.stringify(payload);
  const deliveryId = options.deliveryId ?? randomUUID();
  const attempts = Math.max(1, Math.floor(options.attempts ?? DEFAULT_ATTEMPTS));
  for (let attempt = 1; ; attempt++) {
    throwIfAborted(options.signal);
    const outcome = await attemptWebhook(url, body, { ...options, deliveryId }, attempt, attempt >= attempts);
    if (outcome.kind === 'delivered') return { delivered: true, attempts: attempt, status: outcome.status, deliveryId };
    if (outcome.kind === 'give-up' || attempt >= attempts) return { delivered: false, attempts: attempt, status: outcome.status, deliveryId, error: outcome.error };
    await sleep(retryDelayMs(outcome, attempt, options.baseDelayMs), options.signal);
  }
}

/**
 * One attempt of a delivery that a durable outbox schedules itself (outbox.ts): the same checks, signature
 * and classification as `deliverWebhook`'s; `attempt` (from 1) is for the log line, `last` says no retry follows.
 */
export async function attemptWebhook(
  url: URL,
  body: string,
  options: DeliveryOptions & { deliveryId: string },
  attempt: number,
  last: boolean,
): Promise<AttemptOutcome> {
  const delivery: Delivery = { url, body, deliveryId: options.deliveryId, options, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS };
  const outcome = await (options.throttle ? options.throttle(() => attemptDelivery(delivery)) : attemptDelivery(delivery));
  if (outcome.kind !== 'delivered') logFailedAttempt(delivery, attempt, outcome, !last && outcome.kind === 'retry');
  return outcome;
}

/** The wait before the next attempt: the receiver's Retry-After, else the backoff. */
export function retryDelayMs(outcome: AttemptOutcome, attempt: number, baseDelayMs = DEFAULT_BASE_DELAY_MS): number {
  return (outcome.kind === 'retry' ? outcome.retryAfterMs : undefined) ?? backoffMs(attempt, baseDelayMs);
}

/** Attempts in all by default, the first included. */
export const WEBHOOK_ATTEMPTS = DEFAULT_ATTEMPTS;

function logFailedAttempt(delivery: Delivery, attempt: number, outcome: Exclude<AttemptOutcome, { kind: 'delivered' }>, retrying: boolean): void {
  delivery.options.logger?.warn(
    { deliveryId: delivery.deliveryId, event: delivery.options.event, host: delivery.url.host, attempt, status: outcome.status, error: outcome.error, retrying },
    'Webhook delivery attempt failed',
  );
}

async function attemptDelivery(delivery: Delivery): Promise<AttemptOutcome> {
  const { url, options } = delivery;
  const problem = urlProblem(url);
  if (problem !== undefined) return { kind: 'give-up', error: problem };
  const timeout = AbortSignal.timeout(delivery.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  try {
    const addresses = await untilAborted(lookup(bareHost(url), { all: true }), signal);
    // Any private answer refuses: connecting to a public one could still be steered elsewhere by the next lookup.
    if (!options.allowPrivate && addresses.some((entry) => isPrivateAddress(entry.address))) {
      return { kind: 'give-up', error: `${url.hostname} resolves to ${privateAddressText}` };
    }
    return classify(await post(delivery, addresses, signal));
  } catch (error) {
    throwIfAborted(options.signal);
    return { kind: 'retry', error: timeout.aborted ? `no answer within ${delivery.timeoutMs} ms` : describe(error) };
  }
}

interface ReceiverAnswer {
  status: number;
  retryAfter: string | undefined;
}

/** One POST to the addresses already checked; redirects are answers like any other, never followed. */
function post(delivery: Delivery, addresses: LookupAddress[], signal: AbortSignal): Promise<ReceiverAnswer> {
  const { url, body } = delivery;
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(
      url,
      // A fresh connection each time (agent: false): a pooled one may lead to an address checked for another delivery.
      { method: 'POST', headers: deliveryHeaders(delivery), signal, agent: false, lookup: pinnedLookup(addresses) },
      (response) => {
        // The status decides: a body that breaks off or dawdles changes nothing, and the attempt's timeout ends it.
        discardBody(response).catch(() => undefined);
        resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'] });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** Signed afresh on each attempt, so a retry hours later still falls within a receiver's tolerance. */
function deliveryHeaders({ body, deliveryId, options }: Delivery): http.OutgoingHttpHeaders {
  return {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    'User-Agent': USER_AGENT,
    [EVENT_HEADER]: options.event,
    [DELIVERY_HEADER]: deliveryId,
    [SIGNATURE_HEADER]: signWebhook(options.secret, Math.floor(Date.now() / 1000), body),
  };
}

/** Hands the connection only the addresses already checked, so a second DNS answer (rebinding) cannot lead it inside. */
function pinnedLookup(addresses: LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const [first] = addresses;
    if (options.all) callback(null, addresses);
    else if (first) callback(null, first.address, first.family);
    else callback(Object.assign(new Error('No address to connect to'), { code: 'ENOTFOUND' }), []);
  };
}

async function discardBody(response: http.IncomingMessage): Promise<void> {
  let bytes = 0;
  for await (const chunk of response) {
    bytes += (chunk as Buffer).length;
    if (bytes >= MAX_RESPONSE_BYTES) break;
  }
}

function classify({ status, retryAfter }: ReceiverAnswer): AttemptOutcome {
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  const error = `the receiver answered ${status}`;
  if (status === 408 || status === 429 || status >= 500) {
    const honoured = status === 429 || status === 503 ? retryAfterMs(retryAfter) : undefined;
    return { kind: 'retry', status, error, retryAfterMs: honoured };
  }
  return { kind: 'give-up', status, error };
}

/** Retry-After in seconds or as an HTTP date, capped like any other wait. */
function retryAfterMs(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : Date.parse(text) - Date.now();
  return Number.isNaN(ms) ? undefined : Math.min(MAX_DELAY_MS, Math.max(0, ms));
}

/** Doubling, capped; each wait is drawn between half and all of it so receivers that failed together are not retried in step. */
function backoffMs(attempt: number, baseDelayMs: number): number {
  const ceiling = Math.min(MAX_DELAY_MS, baseDelayMs * 2 ** (attempt - 1));
  return ceiling / 2 + (Math.random() * ceiling) / 2;
}

async function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await delay(ms, undefined, { signal });
  } catch (error) {
    throwIfAborted(signal);
    throw error;
  }
}

/** dns.lookup cannot be cancelled; stop waiting for it instead. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal.reason);
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  return code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
}
