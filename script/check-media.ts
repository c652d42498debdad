/** `node --import tsx script/check-media.ts`: says whether ffmpeg and ffprobe have what voxreel uses (script/setup runs it). */
import { loadConfig } from '../src/config.js';
import { mediaToolProblems, mediaToolsMessage } from '../src/media/capabilities.js';
import { resolveMediaTools } from '../src/media/tools.js';

const tools = resolveMediaTools(loadConfig().paths);
const problems = await mediaToolProblems(tools);
if (problems.length > 0) {
  console.error(mediaToolsMessage(problems));
  process.exit(1);
}
