import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TtsResponse } from '../../src/api/speech.js';
import type { ErrorBody } from '../../src/api/errors.js';
import { Judge, judgeInstalled, normalizeWords, wordErrorRate } from '../helpers/judge.js';
import { postTts, useTestApp } from '../helpers/helpers.js';
import { probe, runFfmpeg } from '../helpers/media.js';

// Three engines at three sample rates: Piper 22.05 kHz, Kokoro 24 kHz, Flite 16 kHz.
const SEGMENTS = [
  { voice: 'piper:en_US-joe-medium', text: 'Did you hear the storm last night? The wind was howling.' },
  { voice: 'kokoro:af_heart', text: 'I did. It kept me awake for hours.' },
  { voice: 'flite:slt', text: 'Me too! The whole house was shaking.' },
  { voice: 'piper:en_US-joe-medium', text: 'Well, the garden fence is gone.' },
];
const NAMES = ['Joe', 'Heart', 'SLT', 'Joe'];

/** The file decoded to mono 16-bit samples at its own rate. */
async function decoded(file: string, rate: number): Promise<Int16Array> {
  const { stdout } = await runFfmpeg(['-v', 'error', '-i', file, '-ac', '1', '-ar', String(rate), '-f', 's16le', '-']);
  return new Int16Array(stdout.buffer, stdout.byteOffset, stdout.byteLength / 2);
}

function peakIn(samples: Int16Array, rate: number, from: number, to: number): number {
  let peak = 0;
  for (let index = Math.max(0, Math.round(from * rate)); index < Math.min(samples.length, Math.round(to * rate)); index += 1) peak = Math.max(peak, Math.abs(samples[index] as number));
  return peak / 32768;
}

interface VttCue {
  start: number;
  end: number;
  voice: string | undefined;
  text: string;
}

function vttCues(vtt: string): VttCue[] {
  const seconds = (time: string) => time.split(':').reduce((sum, part) => sum * 60 + Number(part), 0);
  return vtt
    .split('\n\n')
    .slice(1)
    .filter((block) => block.includes('-->'))
    .map((block) => {
      const [timing = '', ...lines] = block.split('\n');
      const [start = '', end = ''] = timing.split(' --> ');
      const body = lines.join(' ');
      return { start: seconds(start), end: seconds(end), voice: /^<v ([^>]+)>/u.exec(body)?.[1], text: body.replace(/<[^>]*>/gu, '') };
    });
}

const available = judgeInstalled() || Boolean(process.env.CI);

describe('a dialogue: each turn in its own voice', () => {
  const t = useTestApp({ CACHE_MAX_ENTRIES: '0' });
  let judge: Judge | undefined;

  beforeAll(async () => {
    if (available) judge = await Judge.start();
  }, 120_000);
  afterAll(async () => judge?.close());

  it('speaks `segments` in their voices at the first one\'s rate, a turn\'s pause between speakers, captions that say who speaks, billed as one text', async () => {
    const answer = await postTts(t.app, { segments: SEGMENTS, format: 'wav', timestamps: true });
    const file = path.join(t.outputDir, 'audio', path.basename(answer.url));
    const info = await probe(file);
    expect(info.streams[0]?.sampleRate).toBe(22_050);
    expect(answer.voice).toBe(SEGMENTS[0]?.voice);

    // The written text is the turns, a line each: billed and counted as that text in one voice would be.
    const written = SEGMENTS.map((segment) => segment.text).join('\n');
    expect(answer.characters).toBe(written.length);
    const plain = await postTts(t.app, { text: written, voice: 'piper:en_US-joe-medium', format: 'wav' });
    expect(answer.cost).toBe(plain.cost);

    // Each turn's words where its text is, each turn after the one before, with a pause between speakers.
    const words = answer.words ?? [];
    const turns = SEGMENTS.map((segment, index) => {
      const offset = SEGMENTS.slice(0, index).reduce((sum, before) => sum + before.text.length + 1, 0);
      const inside = words.filter((word) => word.text_offset >= offset && word.text_offset < offset + segment.text.length);
      return { first: inside[0], last: inside.at(-1), count: inside.length };
    });
    for (const [index, turn] of turns.entries()) expect(turn.count, `turn ${index} has its words`).toBe(SEGMENTS[index]?.text.split(' ').length);
    const samples = await decoded(file, 22_050);
    for (let index = 1; index < turns.length; index += 1) {
      const before = turns[index - 1]?.last;
      const after = turns[index]?.first;
      if (!before || !after) throw new Error('a turn without words');
      expect(after.start - before.end, `the pause before turn ${index}`).toBeGreaterThan(0.35);
      // Silence between them (a little in from each word's edges, which engines time loosely).
      expect(peakIn(samples, 22_050, before.end + 0.12, after.start - 0.08), `silence before turn ${index}`).toBeLessThan(0.05);
    }

    // WebVTT names who speaks each cue, and no cue holds two speakers' words.
    const vtt = (await t.fetchFile(answer.captionsUrl as string)).body.toString('utf8');
    const cues = vttCues(vtt);
    expect(cues.length).toBeGreaterThanOrEqual(SEGMENTS.length);
    for (const cue of cues) {
      const turn = SEGMENTS.findIndex((segment) => segment.text.includes(cue.text.trim().split(' ')[0] as string) && segment.text.includes(cue.text.trim().split(' ').at(-1) as string));
      expect(turn, `cue "${cue.text}" lies in one turn`).toBeGreaterThanOrEqual(0);
      expect(cue.voice, `cue "${cue.text}"`).toBe(NAMES[turn]);
    }
    expect([...new Set(cues.map((cue) => cue.voice))]).toEqual(['Joe', 'Heart', 'SLT']);
    // SRT has no voice span: each cue names its speaker before its text, the same cues as the WebVTT's.
    const srt = (await t.fetchFile(answer.srtUrl as string)).body.toString('utf8');
    const srtCues = srt.trim().split(/\n\n/u).map((block) => block.split('\n').slice(2).join(' '));
    expect(srtCues).toEqual(cues.map((cue) => `${cue.voice}: ${cue.text.replace(/\n/gu, ' ').trim()}`));

    // Heard: every turn, in every voice (resampled from 24 and 16 kHz), as written.
    if (judge) {
      const heard = await judge.judge(file, { dnsmos: false });
      expect(wordErrorRate(written, heard.transcript), heard.transcript).toBeLessThan(0.2);
    }
  }, 180_000);

  it('takes SSML\'s <voice name> inline, each turn read out (numbers, currencies) as its own voice reads them', async () => {
    const ssml = '<speak>I paid $5 for it. <voice name="kokoro:af_heart">Only $5? That is a bargain.</voice> It was.</speak>';
    const answer = await postTts(t.app, { text: ssml, voice: 'piper:en_US-joe-medium', format: 'wav', timestamps: true });
    expect(answer.characters).toBe('I paid $5 for it.\nOnly $5? That is a bargain.\nIt was.'.length);
    const cues = vttCues((await t.fetchFile(answer.captionsUrl as string)).body.toString('utf8'));
    expect(cues.map((cue) => cue.voice)).toEqual(['Joe', 'Heart', 'Heart', 'Joe']);
    if (judge) {
      const heard = await judge.judge(path.join(t.outputDir, 'audio', path.basename(answer.url)), { dnsmos: false });
      // "$5" said as "five dollars" in both voices.
      expect(normalizeWords(heard.transcript).filter((word) => word === 'five').length, heard.transcript).toBe(2);
    }
  }, 120_000);

  it('applies the client\'s lexicons in every turn, whatever its voice', async () => {
    const lexicon = '<?xml version="1.0"?>\n<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="en-US">' +
      '<lexeme><grapheme>Xqzt</grapheme><alias>Bob</alias></lexeme></lexicon>';
    const uploaded = await t.app.inject({ method: 'POST', url: '/lexicons', payload: lexicon, headers: { 'content-type': 'application/pls+xml' } });
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    const segments = [
      { voice: 'piper:en_US-joe-medium', text: 'Xqzt is here.' },
      { voice: 'kokoro:af_heart', text: 'Hello, Xqzt.' },
    ];
    const answer = await postTts(t.app, { segments, format: 'wav', lexicons: [uploaded.json<{ id: string }>().id] });
    if (judge) {
      const heard = await judge.judge(path.join(t.outputDir, 'audio', path.basename(answer.url)), { dnsmos: false });
      expect(normalizeWords(heard.transcript).filter((word) => word === 'bob').length, heard.transcript).toBe(2);
    }
  }, 120_000);

  it('refuses what it cannot say, naming the field', async () => {
    const refused = async (payload: Record<string, unknown>) => {
      const response = await t.app.inject({ method: 'POST', url: '/tts', payload });
      expect(response.statusCode, response.body).toBeGreaterThanOrEqual(400);
      expect(response.statusCode, response.body).toBeLessThan(500);
      return response.json<ErrorBody>().error;
    };
    expect(await refused({ segments: [SEGMENTS[0], { voice: 'piper:nobody', text: 'Hello.' }] })).toMatchObject({ code: 'UNKNOWN_VOICE', field: 'segments[1].voice' });
    expect(await refused({ segments: SEGMENTS, text: 'Hello.' })).toMatchObject({ code: 'VALIDATION_ERROR', field: 'segments' });
    expect(await refused({ text: 'Hello.' })).toMatchObject({ code: 'VALIDATION_ERROR', field: 'voice' });
    expect(await refused({ segments: [] })).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await refused({ text: '<speak>Hi. <voice name="flite:nobody">Hello.</voice></speak>', voice: 'flite:slt' })).toMatchObject({ code: 'UNKNOWN_VOICE', field: 'text' });
    expect(await refused({ text: '<speak>Hi. <voice>Hello.</voice></speak>', voice: 'flite:slt' })).toMatchObject({ code: 'INVALID_SSML' });
    const voices = (await t.app.inject({ method: 'GET', url: '/voices' })).json<{ voices: Array<{ id: string }> }>().voices.map((voice) => voice.id);
    expect(voices.length).toBeGreaterThan(10);
    expect(await refused({ segments: voices.slice(0, 11).map((voice) => ({ voice, text: 'Hello.' })) })).toMatchObject({ code: 'VALIDATION_ERROR', field: 'segments' });
    // A dialogue's markup is not its text: 4,900 characters in 40 turns are answered at once, as 4,900 of text are.
    const long = Array.from({ length: 40 }, (_, index) => ({ voice: index % 2 ? 'flite:slt' : 'flite:kal16', text: `${'word '.repeat(24)}end.` }));
    const response = await t.app.inject({ method: 'POST', url: '/tts', payload: { segments: long, format: 'wav' } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json<TtsResponse>().characters).toBe(long.reduce((sum, segment) => sum + segment.text.length + 1, -1));
  }, 120_000);
});
