/**
 * The Content-Type a bucket answers with for each extension published. A bucket sends what it was given at upload
 * (local files get theirs from @fastify/static's table, which agrees): without one, S3 says binary/octet-stream
 * and browsers download instead of playing.
 */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  opus: 'audio/ogg',
  flac: 'audio/flac',
  m4a: 'audio/mp4',
  m4b: 'audio/mp4',
  aac: 'audio/aac',
  pcm: 'application/octet-stream',
  mp4: 'video/mp4',
  vtt: 'text/vtt; charset=utf-8',
  srt: 'application/x-subrip; charset=utf-8',
};

export function contentTypeOf(key: string): string {
  return CONTENT_TYPES[key.slice(key.lastIndexOf('.') + 1)] ?? 'application/octet-stream';
}
