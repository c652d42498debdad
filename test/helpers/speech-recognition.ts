import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { runFfmpeg } from './media.js';

const run = promisify(execFile);

/** The paragraph every English voice is scored on: the first paragraph of the Rainbow Passage, a standard reading text. */
export const QUALITY_PARAGRAPH =
  'When the sunlight strikes raindrops in the air, they act as a prism and form a rainbow. The rainbow is a division ' +
  'of white light into many beautiful colors. These take the shape of a long round arch, with its path high above, ' +
  'and its two ends apparently beyond the horizon. There is, according to legend, a boiling pot of gold at one end. ' +
  'People look, but no one ever finds it. When a man looks for something beyond his reach, his friends say he is ' +
  'looking for the pot of gold at the end of the rainbow.';

export const RECOGNIZER = '/usr/bin/pocketsphinx_continuous';

function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^a-z' ]/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

/** Word error rate: the edit distance between the two word sequences over the reference's length. */
export function wordErrorRate(reference: string, hypothesis: string): number {
  const ref = words(reference);
  const hyp = words(hypothesis);
  let previous = Array.from({ length: hyp.length + 1 }, (_, j) => j);
  for (let i = 1; i <= ref.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= hyp.length; j += 1) {
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (ref[i - 1] === hyp[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return (previous[hyp.length] ?? 0) / Math.max(1, ref.length);
}

/** What an offline recognizer (CMU PocketSphinx, US English model) hears in an audio file. */
export async function transcribe(audioFile: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'voxreel-asr-'));
  try {
    const wav = path.join(dir, '16k.wav');
    await runFfmpeg(['-y', '-v', 'error', '-i', audioFile, '-ar', '16000', '-ac', '1', '-c:a', 'pcm_s16le', wav]);
    const { stdout } = await run(RECOGNIZER, ['-infile', wav, '-logfn', '/dev/null'], { maxBuffer: 1 << 20 });
    return stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
