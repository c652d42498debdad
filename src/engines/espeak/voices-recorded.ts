// eSpeak NG's voice list as recorded for one release (script/record-espeak-voices.ts): start-up reads it instead of
// starting a process to ask (a second or more), and asks only when the installed release is another one.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { EspeakDescription } from './protocol.js';

/** The JSON file, kept beside the sources (the build copies it): one path for the recorder and the reader. */
export const RECORDED_VOICES_FILE = fileURLToPath(new URL('./voices-recorded.json', import.meta.url));

interface Recorded extends EspeakDescription {
  /** The @echogarden/espeak-ng-emscripten version it was recorded from. */
  release: string;
}

export function installedEspeakRelease(): string {
  return (createRequire(import.meta.url)('@echogarden/espeak-ng-emscripten/package.json') as { version: string }).version;
}

/** The recorded description when it is of the installed release; undefined otherwise (or when the file is missing). */
export function recordedDescription(): EspeakDescription | undefined {
  let recorded: Recorded;
  try {
    recorded = JSON.parse(readFileSync(RECORDED_VOICES_FILE, 'utf8')) as Recorded;
  } catch {
    return undefined;
  }
  if (recorded.release !== installedEspeakRelease()) return undefined;
  const { sampleRate, voices, variants } = recorded;
  return { sampleRate, voices, variants };
}
