import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

const cores = os.availableParallelism();

/** Every environment variable the service reads, with its default (docs/configuration.md documents it, checked by test/structure/configuration-docs.unit.test.ts). */
/** Limits of a shared service (API keys set, or listening beyond loopback); a personal one has none by default. */
export const SHARED_LIMITS = { rate: 60, jobs: Math.max(2, cores * 2), characters: 200_000, assetMb: 500 } as const;

export const EnvSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  CDN_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  OUTPUT_DIR: Type.String({ minLength: 1, default: 'output' }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
  CURRENCY: Type.String({ pattern: '^[A-Z]{3}$', default: 'USD' }),
  PRICE_TTS_PER_1K_CHARS: Type.Number({ minimum: 0, default: 0.015 }),
  PRICE_VIDEO_PER_1K_CHARS: Type.Number({ minimum: 0, default: 0.015 }),
  PRICE_VIDEO_PER_MINUTE: Type.Number({ minimum: 0, default: 0.1 }),
  CONCURRENCY: Type.Integer({ minimum: 1, maximum: 256, default: cores }),
  QUEUE_LENGTH: Type.Integer({ minimum: 0, maximum: 10_000, default: cores * 8 }),
  TTS_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 60_000 }),
  VIDEO_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 300_000 }),
  TIMEOUT_MS_PER_CHARACTER: Type.Integer({ minimum: 0, maximum: 10_000, default: 70, description: "Added to a job's deadline for each character of its text." }),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, maximum: 10 * 1024 * 1024, default: 1024 * 1024, description: 'Largest request body: a long job\'s 100000 characters of text, escaped in JSON, fit.' }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 30_000, description: 'Time to receive a whole request, headers and body.' }),
  HEADERS_TIMEOUT_MS: Type.Optional(
    Type.Integer({ minimum: 100, description: "Time to receive a request's headers; default 10000, at most REQUEST_TIMEOUT_MS." }),
  ),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 5_000, description: 'An idle keep-alive connection is closed after this long.' }),
  MAX_CONNECTIONS_PER_ADDRESS: Type.Integer({ minimum: 0, default: 0, description: 'Open connections one address may hold; 0 turns the cap off.' }),
  TRUST_PROXY: Type.Optional(
    Type.String({ minLength: 1, description: 'true, false, a hop count, or comma-separated proxy addresses or CIDRs (Fastify trustProxy).' }),
  ),
  API_KEYS: Type.Optional(Type.String({ description: 'Comma-separated API keys.' })),
  API_KEYS_FILE: Type.Optional(Type.String({ minLength: 1, description: 'A file with one API key per line.' })),
  RATE_LIMIT_MAX: Type.Optional(
    Type.Integer({
      minimum: 0,
      description: `Requests per window per key (or per address when open); 0 turns it off. Default ${SHARED_LIMITS.rate}, or off for a personal service (no API keys, loopback only).`,
    }),
  ),
  RATE_LIMIT_WINDOW_MS: Type.Integer({ minimum: 1000, default: 60_000 }),
  AUTH_FAILURE_LIMIT: Type.Integer({
    minimum: 0,
    default: 20,
    description: 'Refused API keys per RATE_LIMIT_WINDOW_MS after which an address is refused; 0 turns it off.',
  }),
  CORS_ORIGINS: Type.Optional(Type.String({ description: 'Comma-separated allowed origins, or *.' })),
  RETENTION_HOURS: Type.Number({ minimum: 0, default: 24, description: 'Generated files older than this are deleted; 0 keeps them.' }),
  ASSETS_DIR: Type.Optional(
    Type.String({ minLength: 1, description: 'Uploaded assets (POST /assets), never served; default `.assets` in OUTPUT_DIR.' }),
  ),
  ASSET_MAX_BYTES: Type.Integer({ minimum: 1024, maximum: 1024 * 1024 * 1024, default: 20 * 1024 * 1024, description: 'Largest file one upload may be.' }),
  ASSET_MAX_PIXELS: Type.Integer({ minimum: 1, maximum: 500_000_000, default: 40_000_000, description: 'Most pixels (width × height) an uploaded image may have.' }),
  ASSET_MAX_AUDIO_SECONDS: Type.Number({ minimum: 1, default: 600, description: 'Longest an uploaded audio file may play.' }),
  ASSET_MAX_VIDEO_SECONDS: Type.Number({ minimum: 1, default: 60, description: 'Longest an uploaded video clip may play (a background loops a shorter one).' }),
  ASSET_MAX_VIDEO_PIXELS: Type.Integer({
    minimum: 1,
    maximum: 100_000_000,
    default: 3840 * 2160,
    description: 'Most pixels (width × height) a frame of an uploaded video clip may have; default 4K UHD.',
  }),
  ASSET_CHECK_CPU_SECONDS: Type.Integer({
    minimum: 1,
    default: 10,
    description: 'CPU time the full decode of one upload may take (ffmpeg is stopped past it and the file refused, 413).',
  }),
  ASSET_RETENTION_HOURS: Type.Optional(
    Type.Number({ minimum: 0, description: 'Uploaded assets older than this are deleted; 0 keeps them; default RETENTION_HOURS, or 24 when that is 0.' }),
  ),
  ASSET_QUOTA_MB: Type.Optional(
    Type.Number({
      minimum: 0,
      description: `Bytes (in MiB) of live assets one client may keep; 0 turns the cap off. Default ${SHARED_LIMITS.assetMb}, or off for a personal service.`,
    }),
  ),
  SHUTDOWN_GRACE_MS: Type.Integer({ minimum: 0, default: 15_000 }),
  CLIENT_MAX_JOBS: Type.Optional(
    Type.Integer({
      minimum: 0,
      description: `Jobs one client (API key, or address) may have running or queued at once; 0 turns the cap off. Default ${SHARED_LIMITS.jobs}, or off for a personal service.`,
    }),
  ),
  CLIENT_CHARACTERS_PER_WINDOW: Type.Optional(
    Type.Integer({
      minimum: 0,
      description: `Characters one client may submit per RATE_LIMIT_WINDOW_MS; 0 turns the cap off. Default ${SHARED_LIMITS.characters}, or off for a personal service.`,
    }),
  ),
  MIN_FREE_DISK_MB: Type.Number({
    minimum: 0,
    default: 256,
    description: 'Below this much free space where files or scratch files are written, /readyz reports not ready and nothing more is written there (503 STORAGE_FULL).',
  }),
  MAX_AUDIO_SECONDS: Type.Number({ minimum: 1, default: 600, description: 'Longest audio one request may make (the file, after speed).' }),
  MAX_VIDEO_SECONDS: Type.Number({ minimum: 1, default: 300, description: 'Longest video one request may make.' }),
  MAX_LONG_AUDIO_SECONDS: Type.Number({ minimum: 1, default: 14_400, description: 'Longest audio one long job (a text over 5000 characters, async) may make.' }),
  MAX_LONG_VIDEO_SECONDS: Type.Number({
    minimum: 1,
    default: 1800,
    description: 'Longest video one long job may make (its narration is held whole while the video is made: about 2.6 MB a minute).',
  }),
  MAX_LONG_SPOKEN_CHARACTERS: Type.Integer({ minimum: 1, default: 250_000, description: 'MAX_SPOKEN_CHARACTERS for a long job.' }),
  MAX_SPOKEN_CHARACTERS: Type.Integer({
    minimum: 1,
    default: 40_000,
    description: 'Longest text one request may have as spoken, after lexicon aliases and normalization (numbers, dates read out); refused before it is built or spoken.',
  }),
  JOB_SCRATCH_MB: Type.Number({
    minimum: 1,
    default: 2048,
    description: 'Scratch space one video job may take for its encoded picture and soundtrack (about 2 MB a second at 1080p), raw background frames and decoded clips; a clip past it is decoded as it plays, an image past it refused (422 RENDER_TOO_LARGE).',
  }),
  KEYFRAME_SECONDS: Type.Number({
    minimum: 0.5,
    maximum: 10,
    default: 2,
    description: 'Seconds between keyframes in videos: a player seeks to the one before the time asked and decodes on from it.',
  }),
  SCRATCH_DIR: Type.Optional(
    Type.String({ minLength: 1, description: 'Scratch space (video parts, engine files); default `voxreel` in the OS temp dir.' }),
  ),
  FFMPEG_PATH: Type.Optional(Type.String({ minLength: 1, description: 'ffmpeg binary; default ffmpeg-static, else `ffmpeg` on PATH.' })),
  FFPROBE_PATH: Type.Optional(Type.String({ minLength: 1, description: 'ffprobe binary; default beside ffmpeg, else `ffprobe` on PATH.' })),
  FESTIVAL_PATH: Type.Optional(Type.String({ minLength: 1, description: 'festival binary; default `festival` on PATH.' })),
  STORAGE: Type.Union([Type.Literal('local'), Type.Literal('s3')], {
    default: 'local',
    description: 'Where generated files go: `local` (OUTPUT_DIR, served under /files) or `s3` (an S3-compatible bucket).',
  }),
  S3_BUCKET: Type.Optional(Type.String({ minLength: 1, description: 'The bucket (STORAGE=s3).' })),
  S3_PREFIX: Type.String({ default: '', description: 'Key prefix inside the bucket, e.g. `voxreel/` (STORAGE=s3).' }),
  S3_ENDPOINT: Type.Optional(
    Type.String({ pattern: '^https?://[^\\s]+$', description: 'Endpoint of an S3-compatible service (MinIO, R2); AWS by default.' }),
  ),
  S3_REGION: Type.Optional(Type.String({ minLength: 1, description: 'Region; default AWS_REGION, else us-east-1 (R2: auto).' })),
  S3_FORCE_PATH_STYLE: Type.Boolean({ default: false, description: 'Bucket in the path, not the host name (MinIO and most self-hosted servers).' }),
  S3_PRESIGN_SECONDS: Type.Integer({
    minimum: 0,
    maximum: 604_800,
    default: 0,
    description: 'A private bucket: URLs are presigned for this many seconds; 0: URLs are CDN_URL + key (a public bucket or a CDN).',
  }),
  REDIS_URL: Type.Optional(
    Type.String({ pattern: '^rediss?://', description: 'Redis: jobs go to a shared queue rendered by `voxreel worker` processes; rate limits, jobs and the cache are shared.' }),
  ),
  WORKER_PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 0,
    description: '`voxreel worker` only: the port of its /healthz, /readyz and /metrics (on HOST), e.g. 3100; 0 (the default) serves none, so several workers share a machine unconfigured.',
  }),
  WYOMING_PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 0,
    description: 'The API process also serves the Wyoming protocol (Home Assistant) on this TCP port (on WYOMING_HOST), usually 10200; 0 (the default) serves none.',
  }),
  WYOMING_HOST: Type.String({
    minLength: 1,
    default: '127.0.0.1',
    description: 'The address the Wyoming server listens on, whatever HOST is: Wyoming has no authentication, so loopback unless set (`0.0.0.0` in a container, or for Home Assistant on another machine).',
  }),
  WYOMING_HEADER_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10_000, description: 'A Wyoming connection that has not sent a whole event this long after it opened, or after an event began, is closed.' }),
  WYOMING_IDLE_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 300_000, description: 'A Wyoming connection that sends no event for this long, with nothing in progress, is closed.' }),
  WYOMING_WRITE_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 30_000, description: 'A Wyoming client that reads nothing of what it is sent for this long is disconnected, its synthesis stopped.' }),
  WYOMING_EVENTS_PER_SECOND: Type.Integer({ minimum: 1, default: 100, description: 'Events one Wyoming connection may have handled a second; more wait their turn (the connection is read no further meanwhile).' }),
  WYOMING_MAX_CONNECTIONS_PER_ADDRESS: Type.Integer({ minimum: 1, default: 16, description: 'Wyoming connections one address may hold; one more is answered with an `error` event and closed.' }),
  WYOMING_CONNECTIONS_PER_SECOND: Type.Integer({
    minimum: 1,
    default: 20,
    description: 'New Wyoming connections one address may open a second; more are closed at once, unread (a client reconnecting without pause).',
  }),
  WYOMING_ZEROCONF: Type.String({
    default: '',
    maxLength: 63,
    pattern: '^[^.]*$',
    description:
      'With WYOMING_PORT: announce the Wyoming server by zeroconf (mDNS, `_wyoming._tcp.local.`) under this name, so that Home Assistant finds it by itself; empty (the default) announces nothing. On WYOMING_HOST\'s interface when it is one IPv4 address; in Docker it needs the host network.',
  }),
  QUEUE_NAME: Type.String({
    minLength: 1,
    pattern: '^[A-Za-z0-9_-]*(\\{[A-Za-z0-9_-]+\\})?[A-Za-z0-9_-]*$',
    default: 'voxreel',
    description: 'Name of the Redis queue (and prefix of its keys); a `{hash tag}` in it (`{voxreel}`) keeps every key in one Redis Cluster slot.',
  }),
  JOB_RETENTION_HOURS: Type.Number({ minimum: 0.0001, default: 24, description: 'How long a job and its result can be read at GET /jobs/{id}.' }),
  WEBHOOK_SECRET: Type.Optional(Type.String({ minLength: 16, description: 'Key of the HMAC-SHA256 signature on webhook deliveries; webhooks are refused without it.' })),
  WEBHOOK_ALLOW_PRIVATE: Type.Boolean({ default: false, description: 'Allow webhooks to loopback, private and link-local addresses.' }),
  WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 1, default: 64, description: 'Webhook attempts in flight at once per process (connections); the rest wait their turn.' }),
  WEBHOOK_CLIENT_CONCURRENCY: Type.Integer({ minimum: 1, default: 8, description: 'Webhook attempts in flight at once for one client (API key, or address).' }),
  CACHE_MAX_ENTRIES: Type.Integer({ minimum: 0, default: 10_000, description: 'Identical requests remembered (their results); 0 turns the cache off.' }),
  CACHE_SCOPE: Type.Union([Type.Literal('tenant'), Type.Literal('shared')], {
    default: 'tenant',
    description:
      'Whose earlier results a request may be answered from: `tenant`, its own client\'s (API key, or address); `shared`, anyone\'s (more hits, but a hit tells a client that someone asked for that text before).',
  }),
  SENTENCE_CACHE_MB: Type.Number({ minimum: 0, default: 64, description: 'Memory for synthesized sentences, per process; 0 turns it off.' }),
  PRICE_CACHE_HIT_FACTOR: Type.Number({
    minimum: 0,
    maximum: 1,
    default: 0,
    description: 'A cached answer costs this fraction of the full price (0: free).',
  }),
  VOICES_DIR: Type.String({
    minLength: 1,
    default: 'voices',
    description: 'Piper voices (`<voice>.onnx` with its `<voice>.onnx.json`, subfolders included); none there, no Piper voices.',
  }),
  ONNXRUNTIME_LIBRARY: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        "Piper's ONNX Runtime: a `libonnxruntime.so` file, or `npm` for onnxruntime-node's 1.30; default the 1.32 that script/setup installs in `runtime/` (onnxruntime-node's where it is missing).",
    }),
  ),
  ENGINE_ALLOCATOR: Type.Union([Type.Literal('auto'), Type.Literal('jemalloc'), Type.Literal('glibc')], {
    default: 'auto',
    description:
      "The C allocator of Piper's and Kokoro's processes: `jemalloc` (script/setup and the image install it; `auto`, the default, takes it where it is installed) gives back what a long job's inferences freed (measured: a 15,000-character Piper job +147 MB above rest, +349 MB with glibc's); `glibc`: the system's.",
  }),
  ENGINE_START_TIMEOUT_MS: Type.Integer({
    minimum: 1000,
    default: 60_000,
    description: 'How long an engine process may take to start; one that misses it is tried once more, then its engine is unavailable (and tried again later).',
  }),
  WARM_VOICE: Type.String({
    minLength: 1,
    maxLength: 100,
    default: 'auto',
    description:
      'A voice spoken once at start-up, so that its engine and model are loaded before /readyz says ready: `auto` (the recommended English voice), a voice id, or `none`.',
  }),
});
export type Env = Static<typeof EnvSchema>;

export interface Config {
  port: number;
  host: string;
  /** Public base URL of OUTPUT_DIR, without a trailing slash. */
  cdnUrl: string;
  /** Whether CDN_URL was given (else it is this process's own address). */
  cdnUrlGiven: boolean;
  /** Absolute path of the directory generated files are written to. */
  outputDir: string;
  /** Where voice previews are cached: OUTPUT_DIR/previews, or the scratch root with a bucket (nothing written to OUTPUT_DIR then). */
  previewsDir: string;
  logLevel: string;
  pricing: {
    currency: string;
    ttsPer1kChars: number;
    videoPer1kChars: number;
    videoPerMinute: number;
  };
  concurrency: number;
  queueLength: number;
  ttsTimeoutMs: number;
  videoTimeoutMs: number;
  /** Added to a job's deadline per character of text (TIMEOUT_MS_PER_CHARACTER): a long text spoken by a slow voice is not cut at TTS_TIMEOUT_MS. */
  timeoutMsPerCharacter: number;
  bodyLimitBytes: number;
  /** Empty: the service is open to anyone who can reach it. */
  apiKeys: string[];
  /** `authFailures`: refused API keys per window and address before the address is refused (0: no limit). */
  rateLimit: { max: number; windowMs: number; authFailures: number };
  /** How long receiving a request may take, how long an idle connection stays, and how many one address may hold (0: no cap). */
  connections: { requestTimeoutMs: number; headersTimeoutMs: number; keepAliveTimeoutMs: number; maxPerAddress: number };
  /** Fastify's `trustProxy`: which proxies' X-Forwarded-For to believe for the client's address. */
  trustProxy: TrustProxy;
  corsOrigins: string[];
  retentionMs: number;
  /** Uploaded assets: their private folder (absolute), upload limits and retention (0: kept). */
  assets: {
    dir: string;
    maxBytes: number;
    maxPixels: number;
    maxAudioSeconds: number;
    maxVideoSeconds: number;
    maxVideoPixels: number;
    cpuSeconds: number;
    retentionMs: number;
    quotaBytes: number;
  };
  shutdownGraceMs: number;
  /** No API keys and a loopback HOST: rate limits and per-client caps are off unless set. */
  personal: boolean;
  /** Per-client shares of the job queue. */
  clientQuota: { maxJobs: number; characters: number };
  minFreeDiskBytes: number;
  /** What one request may make (request-budget.ts): seconds of output, characters as spoken, scratch bytes, disk left free. */
  maxOutput: {
    audioSeconds: number;
    videoSeconds: number;
    spokenCharacters: number;
    jobScratchBytes: number;
    minFreeDiskBytes: number;
    longAudioSeconds: number;
    longVideoSeconds: number;
    longSpokenCharacters: number;
  };
  /** Seconds between keyframes in videos. */
  keyframeSeconds: number;
  /** Absolute path of the scratch-space root. */
  scratchDir: string;
  /** Absolute path of the folder of Piper voices (it may be missing). */
  voicesDir: string;
  engineStartTimeoutMs: number;
  /** ONNXRUNTIME_LIBRARY: Piper's ONNX Runtime library file, or `npm`; undefined: the installed 1.32. */
  onnxRuntimeLibrary: string | undefined;
  /** ENGINE_ALLOCATOR: the C allocator of the neural engines' processes. */
  engineAllocator: 'auto' | 'jemalloc' | 'glibc';
  /** The voice spoken once at start-up (`auto`: the recommended English one), or undefined for none. */
  warmVoice: string | undefined;
  /** Binaries given explicitly; each is looked up on its own when absent. */
  paths: { ffmpeg?: string; ffprobe?: string; festival?: string };
  /** Where generated files are published. */
  storage: StorageConfig;
  /** Redis, when jobs, limits and the cache are shared between processes; undefined: all in this process. */
  redisUrl?: string;
  queueName: string;
  /** `voxreel worker`: the port of its health and metrics (0: none). */
  workerPort: number;
  wyoming: WyomingConfig;
  jobRetentionMs: number;
  /** `outboxDir`: where deliveries wait without Redis (OUTPUT_DIR/.webhooks, private, never served). */
  webhooks: { secret?: string; allowPrivate: boolean; concurrency: number; clientConcurrency: number; outboxDir: string };
  cache: { maxEntries: number; sentenceBytes: number; hitPriceFactor: number; scope: 'tenant' | 'shared' };
}

/** The Wyoming (Home Assistant) server of the API process and its bounds per connection. */
export interface WyomingConfig {
  /** TCP port; 0: none. */
  port: number;
  host: string;
  /** The name it is announced under by zeroconf; undefined: not announced. */
  zeroconf: string | undefined;
  headerTimeoutMs: number;
  idleTimeoutMs: number;
  writeTimeoutMs: number;
  eventsPerSecond: number;
  connectionsPerAddress: number;
  /** New connections an address may open a second (WYOMING_CONNECTIONS_PER_SECOND). */
  connectionsPerSecond: number;
}

export type StorageConfig =
  | { kind: 'local' }
  | {
      kind: 's3';
      bucket: string;
      prefix: string;
      endpoint?: string;
      region: string;
      forcePathStyle: boolean;
      /** 0: public URLs (CDN_URL + key). */
      presignSeconds: number;
    };

export type TrustProxy = boolean | number | string[];

/** The URL path under which the service serves OUTPUT_DIR; the default CDN_URL points here. */
export const FILES_PREFIX = '/files';
/** The URL path of the OpenAI-compatible API (OpenAI's own prefix). */
export const OPENAI_PREFIX = '/v1';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** `make()`, or what `fail` makes of its error (start-up code: a value or the end of the process). */
export function attempt<T>(make: () => T, fail: (error: unknown) => never): T {
  try {
    return make();
  } catch (error) {
    return fail(error);
  }
}

/** A setting the service cannot start with: its message names the variable and says why, on one line. */
export function exitOnConfigError(program: string) {
  return (error: unknown): never => {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`${program}: ${error.message}`);
    process.exit(1);
  };
}

/** Parses the environment once; any bad value throws a ConfigError naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const known = Object.keys(EnvSchema.properties);
  const raw: Record<string, unknown> = {};
  for (const key of known) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const converted = Value.Default(EnvSchema, Value.Convert(EnvSchema, raw));
  const firstError = Value.Errors(EnvSchema, converted).First();
  if (firstError) {
    const variable = firstError.path.replace(/^\//, '');
    throw new ConfigError(`Invalid environment variable ${variable}=${JSON.stringify(raw[variable])}: ${firstError.message}`);
  }
  const parsed = converted as Env;
  const apiKeys = [...splitList(parsed.API_KEYS, ','), ...readKeysFile(parsed.API_KEYS_FILE)];
  // One person's service on their own machine: nobody else can reach it, so nothing to share fairly.
  const personal = apiKeys.length === 0 && isLoopback(parsed.HOST);
  const scratchDir = path.resolve(parsed.SCRATCH_DIR ?? path.join(os.tmpdir(), 'voxreel'));
  const defaultCdnUrl = `http://${displayHost(parsed.HOST)}:${parsed.PORT}${FILES_PREFIX}`;
  return {
    port: parsed.PORT,
    host: parsed.HOST,
    cdnUrl: (parsed.CDN_URL ?? defaultCdnUrl).replace(/\/+$/, ''),
    cdnUrlGiven: parsed.CDN_URL !== undefined,
    outputDir: path.resolve(parsed.OUTPUT_DIR),
    logLevel: parsed.LOG_LEVEL,
    pricing: {
      currency: parsed.CURRENCY,
      ttsPer1kChars: parsed.PRICE_TTS_PER_1K_CHARS,
      videoPer1kChars: parsed.PRICE_VIDEO_PER_1K_CHARS,
      videoPerMinute: parsed.PRICE_VIDEO_PER_MINUTE,
    },
    concurrency: parsed.CONCURRENCY,
    queueLength: parsed.QUEUE_LENGTH,
    ttsTimeoutMs: parsed.TTS_TIMEOUT_MS,
    videoTimeoutMs: parsed.VIDEO_TIMEOUT_MS,
    timeoutMsPerCharacter: parsed.TIMEOUT_MS_PER_CHARACTER,
    bodyLimitBytes: parsed.BODY_LIMIT_BYTES,
    apiKeys,
    rateLimit: { max: parsed.RATE_LIMIT_MAX ?? (personal ? 0 : SHARED_LIMITS.rate), windowMs: parsed.RATE_LIMIT_WINDOW_MS, authFailures: parsed.AUTH_FAILURE_LIMIT },
    connections: {
      requestTimeoutMs: parsed.REQUEST_TIMEOUT_MS,
      headersTimeoutMs: headersTimeout(parsed.HEADERS_TIMEOUT_MS, parsed.REQUEST_TIMEOUT_MS),
      keepAliveTimeoutMs: parsed.KEEP_ALIVE_TIMEOUT_MS,
      maxPerAddress: parsed.MAX_CONNECTIONS_PER_ADDRESS,
    },
    trustProxy: parseTrustProxy(parsed.TRUST_PROXY),
    corsOrigins: splitList(parsed.CORS_ORIGINS, ','),
    retentionMs: parsed.RETENTION_HOURS * 3_600_000,
    assets: {
      dir: path.resolve(parsed.ASSETS_DIR ?? path.join(parsed.OUTPUT_DIR, '.assets')),
      maxBytes: parsed.ASSET_MAX_BYTES,
      maxPixels: parsed.ASSET_MAX_PIXELS,
      maxAudioSeconds: parsed.ASSET_MAX_AUDIO_SECONDS,
      maxVideoSeconds: parsed.ASSET_MAX_VIDEO_SECONDS,
      maxVideoPixels: parsed.ASSET_MAX_VIDEO_PIXELS,
      cpuSeconds: parsed.ASSET_CHECK_CPU_SECONDS,
      quotaBytes: (parsed.ASSET_QUOTA_MB ?? (personal ? 0 : SHARED_LIMITS.assetMb)) * 1024 * 1024,
      retentionMs: (parsed.ASSET_RETENTION_HOURS ?? (parsed.RETENTION_HOURS > 0 ? parsed.RETENTION_HOURS : 24)) * 3_600_000,
    },
    shutdownGraceMs: parsed.SHUTDOWN_GRACE_MS,
    clientQuota: {
      maxJobs: parsed.CLIENT_MAX_JOBS ?? (personal ? 0 : SHARED_LIMITS.jobs),
      characters: parsed.CLIENT_CHARACTERS_PER_WINDOW ?? (personal ? 0 : SHARED_LIMITS.characters),
    },
    personal,
    minFreeDiskBytes: parsed.MIN_FREE_DISK_MB * 1024 * 1024,
    maxOutput: {
      audioSeconds: parsed.MAX_AUDIO_SECONDS,
      videoSeconds: parsed.MAX_VIDEO_SECONDS,
      spokenCharacters: parsed.MAX_SPOKEN_CHARACTERS,
      jobScratchBytes: parsed.JOB_SCRATCH_MB * 1024 * 1024,
      minFreeDiskBytes: parsed.MIN_FREE_DISK_MB * 1024 * 1024,
      longAudioSeconds: parsed.MAX_LONG_AUDIO_SECONDS,
      longVideoSeconds: parsed.MAX_LONG_VIDEO_SECONDS,
      longSpokenCharacters: parsed.MAX_LONG_SPOKEN_CHARACTERS,
    },
    keyframeSeconds: parsed.KEYFRAME_SECONDS,
    scratchDir,
    previewsDir: path.join(parsed.STORAGE === 's3' ? scratchDir : path.resolve(parsed.OUTPUT_DIR), 'previews'),
    voicesDir: path.resolve(parsed.VOICES_DIR),
    warmVoice: parsed.WARM_VOICE === 'none' ? undefined : parsed.WARM_VOICE,
    engineStartTimeoutMs: parsed.ENGINE_START_TIMEOUT_MS,
    engineAllocator: parsed.ENGINE_ALLOCATOR,
    onnxRuntimeLibrary: parsed.ONNXRUNTIME_LIBRARY === undefined || parsed.ONNXRUNTIME_LIBRARY === 'npm' ? parsed.ONNXRUNTIME_LIBRARY : path.resolve(parsed.ONNXRUNTIME_LIBRARY),
    paths: { ffmpeg: parsed.FFMPEG_PATH, ffprobe: parsed.FFPROBE_PATH, festival: parsed.FESTIVAL_PATH },
    storage: storageConfig(parsed, env),
    redisUrl: parsed.REDIS_URL,
    queueName: parsed.QUEUE_NAME,
    workerPort: parsed.WORKER_PORT,
    wyoming: {
      port: parsed.WYOMING_PORT,
      host: parsed.WYOMING_HOST,
      zeroconf: parsed.WYOMING_ZEROCONF || undefined,
      headerTimeoutMs: parsed.WYOMING_HEADER_TIMEOUT_MS,
      idleTimeoutMs: parsed.WYOMING_IDLE_TIMEOUT_MS,
      writeTimeoutMs: parsed.WYOMING_WRITE_TIMEOUT_MS,
      eventsPerSecond: parsed.WYOMING_EVENTS_PER_SECOND,
      connectionsPerAddress: parsed.WYOMING_MAX_CONNECTIONS_PER_ADDRESS,
      connectionsPerSecond: parsed.WYOMING_CONNECTIONS_PER_SECOND,
    },
    jobRetentionMs: parsed.JOB_RETENTION_HOURS * 3_600_000,
    webhooks: {
      secret: parsed.WEBHOOK_SECRET,
      allowPrivate: parsed.WEBHOOK_ALLOW_PRIVATE,
      concurrency: parsed.WEBHOOK_CONCURRENCY,
      clientConcurrency: parsed.WEBHOOK_CLIENT_CONCURRENCY,
      outboxDir: path.resolve(parsed.OUTPUT_DIR, '.webhooks'),
    },
    cache: { maxEntries: parsed.CACHE_MAX_ENTRIES, sentenceBytes: parsed.SENTENCE_CACHE_MB * 1024 * 1024, hitPriceFactor: parsed.PRICE_CACHE_HIT_FACTOR, scope: parsed.CACHE_SCOPE },
  };
}

function storageConfig(parsed: Env, env: NodeJS.ProcessEnv): StorageConfig {
  if (parsed.STORAGE === 'local') return { kind: 'local' };
  if (!parsed.S3_BUCKET) throw invalidVariable('S3_BUCKET', undefined, 'required with STORAGE=s3');
  if (parsed.S3_PRESIGN_SECONDS === 0 && !parsed.CDN_URL) {
    throw invalidVariable('CDN_URL', undefined, "required with STORAGE=s3 unless S3_PRESIGN_SECONDS is set: the bucket's public or CDN address");
  }
  return {
    kind: 's3',
    bucket: parsed.S3_BUCKET,
    prefix: parsed.S3_PREFIX,
    endpoint: parsed.S3_ENDPOINT,
    region: parsed.S3_REGION ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
    forcePathStyle: parsed.S3_FORCE_PATH_STYLE,
    presignSeconds: parsed.S3_PRESIGN_SECONDS,
  };
}

function invalidVariable(name: string, value: string | undefined, reason: string): ConfigError {
  return new ConfigError(`Invalid environment variable ${name}=${JSON.stringify(value)}: ${reason}`);
}

const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;

/** Node refuses a headers timeout longer than the request timeout. */
function headersTimeout(value: number | undefined, requestTimeoutMs: number): number {
  if (value === undefined) return Math.min(DEFAULT_HEADERS_TIMEOUT_MS, requestTimeoutMs);
  if (value > requestTimeoutMs) {
    throw invalidVariable('HEADERS_TIMEOUT_MS', String(value), `must be at most REQUEST_TIMEOUT_MS (${requestTimeoutMs})`);
  }
  return value;
}

/** Names proxy-addr (Fastify's trustProxy) knows besides addresses. */
const PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function parseTrustProxy(value: string | undefined): TrustProxy {
  const text = value?.trim().toLowerCase() ?? 'false';
  if (text === 'true' || text === 'false') return text === 'true';
  if (/^\d+$/.test(text)) return Number(text);
  const entries = splitList(text, ',');
  const bad = entries.find((entry) => !PROXY_RANGES.has(entry) && !isAddressOrCidr(entry));
  if (bad !== undefined || entries.length === 0) {
    const reason = 'expected true, false, a hop count, or comma-separated addresses or CIDRs';
    throw invalidVariable('TRUST_PROXY', value, bad === undefined ? reason : `${reason} (not ${JSON.stringify(bad)})`);
  }
  return entries;
}

function isAddressOrCidr(entry: string): boolean {
  const [address = '', bits, ...extra] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || extra.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d+$/.test(bits) ? Number(bits) <= (version === 4 ? 32 : 128) : isIP(bits) === 4 && version === 4;
}

function splitList(value: string | undefined, separator: string | RegExp): string[] {
  return (value ?? '')
    .split(separator)
    .map((item) => item.trim())
    .filter((item) => item && !item.startsWith('#'));
}

function readKeysFile(file: string | undefined): string[] {
  if (!file) return [];
  try {
    return splitList(readFileSync(file, 'utf8'), /\r?\n/);
  } catch (error) {
    throw new ConfigError(`Invalid environment variable API_KEYS_FILE=${JSON.stringify(file)}: ${(error as Error).message}`);
  }
}

/** Whether HOST only takes connections from this machine. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

function displayHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '127.0.0.1' || host === '::1') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}
