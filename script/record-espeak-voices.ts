// `node --import tsx script/record-espeak-voices.ts`: asks eSpeak NG's host for its voices, variants and sample rate
// and writes them to src/engines/espeak/voices-recorded.json with the release they came from, so that start-up
// lists them without starting a process. Run it after updating @echogarden/espeak-ng-emscripten
// (test/engines/espeak-recorded-voices.test.ts fails until it has been).
import { writeFile } from 'node:fs/promises';
import { EspeakEngine } from '../src/engines/espeak/engine.js';
import { installedEspeakRelease, RECORDED_VOICES_FILE } from '../src/engines/espeak/voices-recorded.js';

const description = await EspeakEngine.describe();
// One voice or variant per line: a new release's changes read as a short diff.
const lines = (items: readonly object[]) => items.map((item) => `  ${JSON.stringify(item)}`).join(',\n');
const { sampleRate, voices, variants } = description;
await writeFile(
  RECORDED_VOICES_FILE,
  `{\n "release": ${JSON.stringify(installedEspeakRelease())},\n "sampleRate": ${sampleRate},\n "voices": [\n${lines(voices)}\n ],\n "variants": [\n${lines(variants)}\n ]\n}\n`,
);
console.log(`${RECORDED_VOICES_FILE}: ${description.voices.length} voices, ${description.variants.length} variants of eSpeak NG ${installedEspeakRelease()}`);
