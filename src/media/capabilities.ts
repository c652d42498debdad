import { runProcess } from './process.js';
import type { MediaTools } from './tools.js';

/** Encoders voxreel writes with: videos (x264, AAC), /tts formats (MP3, Vorbis, Opus, FLAC, WAV). */
const ENCODERS = ['libx264', 'aac', 'libmp3lame', 'libvorbis', 'libopus', 'flac', 'pcm_s16le'];
/** Filters of the renderer, the soundtrack and the speed and loudness paths. */
const FILTERS = [
  'ass', 'color', 'scale', 'setsar', 'format', 'trim', 'select', 'split', 'crop', 'loop', 'setpts',
  'atempo', 'volume', 'aresample', 'aformat', 'asplit', 'atrim', 'afade', 'sidechaincompress', 'amix', 'alimiter', 'ebur128',
];
const TIMEOUT_MS = 15_000;

/** What is wrong with these ffmpeg and ffprobe for voxreel, one phrase per problem: an empty list when nothing is. */
export async function mediaToolProblems(tools: MediaTools): Promise<string[]> {
  const run = async (command: string, args: string[]) => {
    try {
      return (await runProcess(command, ['-hide_banner', ...args], { timeoutMs: TIMEOUT_MS })).stdout.toString('utf8');
    } catch {
      return undefined;
    }
  };
  const [encoders, filters, probe] = await Promise.all([run(tools.ffmpeg, ['-encoders']), run(tools.ffmpeg, ['-filters']), run(tools.ffprobe, ['-version'])]);
  const problems: string[] = [];
  if (!encoders?.includes('Encoders:') || !filters?.includes('Filters:')) problems.push(`${tools.ffmpeg} does not run as ffmpeg`);
  if (!probe?.includes('ffprobe version')) problems.push(`${tools.ffprobe} does not run as ffprobe`);
  if (problems.length > 0) return problems;
  // `-encoders` lists " V....D libx264 ..."; `-filters` lists " ..C ass  V->V ...": the name is the second field.
  const names = (listing: string) => new Set(listing.split('\n').map((line) => line.trim().split(/\s+/)[1]));
  const [haveEncoders, haveFilters] = [names(encoders ?? ''), names(filters ?? '')];
  const lacking = [
    ...ENCODERS.filter((name) => !haveEncoders.has(name)).map((name) => `the ${name} encoder`),
    ...FILTERS.filter((name) => !haveFilters.has(name)).map((name) => `the ${name} filter`),
  ];
  return lacking.length > 0 ? [`ffmpeg (${tools.ffmpeg}) lacks ${lacking.join(', ')}`] : [];
}

/** One line naming what is wrong and the fix, for start-up and script/setup. */
export function mediaToolsMessage(problems: readonly string[]): string {
  return (
    `voxreel cannot start: ${problems.join('; ')}. Run script/setup (on Debian or Ubuntu it installs ffmpeg), or install an ` +
    'ffmpeg with libx264, libmp3lame, libvorbis, libopus and libass and set FFMPEG_PATH and FFPROBE_PATH to it.'
  );
}
