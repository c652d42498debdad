export type VoiceErrorCode =
  | 'USAGE'
  | 'BAD_NAME'
  | 'BAD_LOCK'
  | 'UNKNOWN_VOICE'
  | 'NOT_INSTALLED'
  | 'DOWNLOAD_FAILED'
  | 'DOWNLOAD_TIMEOUT'
  | 'INTEGRITY'
  | 'NO_PIP'
  | 'PIP_FAILED'
  | 'INTERRUPTED';

/** What went wrong with a voice, with a machine-readable code; the message is the one line the CLI prints. */
export class VoiceError extends Error {
  constructor(
    readonly code: VoiceErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'VoiceError';
  }
}
