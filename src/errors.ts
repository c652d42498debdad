/** Every error the service can answer with: one table, one class, one body shape (docs/api.md, Errors). */
export const ErrorTable = {
  BAD_REQUEST: { status: 400, message: 'The request is malformed.' },
  VALIDATION_ERROR: { status: 400, message: 'The request body is invalid.' },
  INVALID_JSON: { status: 400, message: 'The request body is not valid JSON.' },
  UNKNOWN_VOICE: { status: 400, message: 'No voice has this id; GET /voices lists them.' },
  UNSUPPORTED_TEXT: { status: 422, message: 'The text contains characters this operation cannot render.' },
  INVALID_SSML: { status: 400, message: 'The SSML is malformed or uses what voxreel does not speak (docs/api.md, SSML).' },
  UNSUPPORTED_SSML: { status: 422, message: 'This voice cannot do what the SSML asks (docs/api.md, SSML, says which engine does what).' },
  OUTPUT_TOO_LONG: { status: 422, message: 'The text makes more audio than one request may; split it into several requests.' },
  RENDER_TOO_LARGE: { status: 422, message: 'The video needs more scratch space than one job may use (JOB_SCRATCH_MB): fewer clips, a lower fps or resolution.' },
  INVALID_SCENES: { status: 422, message: 'The scenes do not fit the narration: a sentence past its last one, or starts that do not rise (docs/api.md, POST /tts-video, Scenes).' },
  INVALID_ASSET: { status: 422, message: 'The file is damaged or truncated: it does not decode.' },
  INVALID_LEXICON: { status: 400, message: 'The pronunciation lexicon is not valid PLS 1.0.' },
  UNKNOWN_LEXICON: { status: 422, message: 'No lexicon of yours has this id; it may have been deleted (POST /lexicons uploads one).' },
  UNKNOWN_ASSET: { status: 422, message: 'No asset of the kind this field takes has this id; it may have expired or been deleted (POST /assets uploads one).' },
  UNAUTHORIZED: { status: 401, message: 'A valid API key is required (Authorization: Bearer <key>, xi-api-key: <key> or x-api-key: <key>).' },
  NOT_FOUND: { status: 404, message: 'No such route or file.' },
  JOB_NOT_FOUND: { status: 404, message: 'No job has this id; it may have expired (JOB_RETENTION_HOURS).' },
  JOB_CANCELLED: { status: 409, message: 'The job was cancelled (DELETE /jobs/{id}).' },
  ASSET_NOT_FOUND: { status: 404, message: 'No asset has this id; it may have expired or been deleted.' },
  LEXICON_NOT_FOUND: { status: 404, message: 'No lexicon has this id; it may have been deleted.' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'This route does not accept that method.' },
  NOT_ACCEPTABLE: { status: 406, message: 'The Accept header asks for no type this route answers with.' },
  REQUEST_TIMEOUT: { status: 408, message: 'The request took too long to arrive.' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  ASSET_TOO_LARGE: { status: 413, message: 'The file exceeds an upload limit (bytes, pixels or seconds).' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Send the body as application/json.' },
  UNSUPPORTED_ASSET: { status: 415, message: 'The file is not a supported image (PNG, JPEG, WebP), audio file (MP3, WAV, OGG Vorbis or Opus, M4A/AAC, FLAC) video clip (MP4, MOV, WebM: H.264, VP9, AV1) or EPUB book without DRM.' },
  RANGE_NOT_SATISFIABLE: { status: 416, message: 'The requested range lies outside the file.' },
  EXPECTATION_FAILED: { status: 417, message: 'The only expectation supported is Expect: 100-continue.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests; retry later.' },
  HEADERS_TOO_LARGE: { status: 431, message: 'The request line and headers are too large.' },
  CLIENT_CLOSED: { status: 499, message: 'The client closed the request before it finished.' },
  INTERNAL_ERROR: { status: 500, message: 'An unexpected error occurred.' },
  ENGINE_FAILED: { status: 502, message: 'The speech engine failed.' },
  MEDIA_FAILED: { status: 502, message: 'The media encoder failed.' },
  OVERLOADED: { status: 503, message: 'The service is busy; retry later.' },
  ENGINE_UNAVAILABLE: { status: 503, message: 'The engine of this voice could not start; it is tried again now and then (see /readyz).' },
  SHUTTING_DOWN: { status: 503, message: 'The service is shutting down; retry in a moment.' },
  JOB_TIMEOUT: { status: 504, message: 'The job took too long and was stopped.' },
  STORAGE_FAILED: { status: 507, message: 'The output could not be stored.' },
  STORAGE_UNAVAILABLE: { status: 503, message: 'The file storage does not answer; retry later.' },
  STORAGE_FULL: { status: 503, message: 'The server is low on disk space (MIN_FREE_DISK_MB); retry later.' },
  ASSET_QUOTA_EXCEEDED: { status: 507, message: 'Your assets would pass the bytes kept per client (ASSET_QUOTA_MB); delete some or wait until they expire.' },
  LEXICON_QUOTA_EXCEEDED: { status: 507, message: 'You keep as many lexicons as one client may; delete one (DELETE /lexicons/{id}) first.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ErrorTable;

export interface AppErrorOptions {
  message?: string;
  /** The request field at fault (JSON pointer without the leading slash, e.g. `text`). */
  field?: string;
  /** Seconds a client should wait before retrying (sent as Retry-After). */
  retryAfter?: number;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly field: string | undefined;
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    super(options.message ?? ErrorTable[code].message, { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.statusCode = ErrorTable[code].status;
    this.field = options.field;
    this.retryAfter = options.retryAfter;
  }
}

/** Why a job was stopped from outside; each is the reason its AbortSignal carries, thrown as it is by every layer. */
export type CancelCode = 'CLIENT_CLOSED' | 'JOB_TIMEOUT' | 'SHUTTING_DOWN' | 'JOB_CANCELLED';

export function cancelReason(code: CancelCode): AppError {
  return new AppError(code);
}

/**
 * What an aborted signal stands for: its reason when that is one of ours (client gone, deadline, shutdown); a
 * signal aborted by someone else (a caller's own AbortController) reads as the caller having gone away.
 */
export function abortError(reason: unknown): AppError {
  return reason instanceof AppError ? reason : new AppError('CLIENT_CLOSED', { cause: reason });
}

/** The API's error for a child process that was stopped or failed: its cancel reason, its own time limit, or `failedCode`. */
export function processFailure(flags: { timedOut: boolean; isCanceled: boolean; cancelReason?: unknown }, failedCode: ErrorCode, cause: unknown): AppError {
  if (flags.isCanceled) return abortError(flags.cancelReason);
  if (flags.timedOut) return new AppError('JOB_TIMEOUT', { cause });
  return new AppError(failedCode, { cause });
}

/** A deadline as an AbortSignal that aborts with JOB_TIMEOUT; `clear` stops its timer when the work ends first. */
export function deadlineSignal(timeoutMs: number): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(cancelReason('JOB_TIMEOUT')), timeoutMs);
  timer.unref();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
