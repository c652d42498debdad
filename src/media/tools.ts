import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface MediaTools {
  ffmpeg: string;
  ffprobe: string;
}

/** The given ffmpeg (FFMPEG_PATH), else ffmpeg-static's binary if its download succeeded, else `ffmpeg` on PATH; ffprobe likewise or beside ffmpeg. */
export function resolveMediaTools(given: Partial<MediaTools> = {}): MediaTools {
  const ffmpeg = given.ffmpeg || staticFfmpeg() || 'ffmpeg';
  const sibling = path.isAbsolute(ffmpeg) ? path.join(path.dirname(ffmpeg), 'ffprobe') : undefined;
  const ffprobe = given.ffprobe || (sibling && existsSync(sibling) ? sibling : 'ffprobe');
  return { ffmpeg, ffprobe };
}

function staticFfmpeg(): string | undefined {
  try {
    const file = createRequire(import.meta.url)('ffmpeg-static') as unknown;
    return typeof file === 'string' && existsSync(file) ? file : undefined;
  } catch {
    return undefined; // optional dependency: its install script needs GitHub, which may be out of reach
  }
}
