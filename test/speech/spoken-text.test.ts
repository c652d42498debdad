// What engines are given: lexicon aliases and English normalization, mapped back to the written words.
import { describe, expect, it } from 'vitest';
import type { LexiconResponse } from '../../src/api/lexicons.js';
import type { TtsResponse } from '../../src/api/speech.js';
import type { Voice } from '../../src/engines/voice.js';
import { parseLexicon } from '../../src/speech/lexicon.js';
import { readScript } from '../../src/speech/read-script.js';
import { speakable } from '../../src/speech/spoken-text.js';
import { useTestApp } from '../helpers/helpers.js';

const ENGLISH = { id: 'espeak-ng:en-us', language: 'en-US', engine: 'espeak-ng' } as Voice;
const GERMAN = { id: 'espeak-ng:de', language: 'de', engine: 'espeak-ng' } as Voice;
const LEXICON = `<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="en-US">
  <lexeme><grapheme>WHO</grapheme><alias>World Health Organization</alias></lexeme>
  <lexeme><grapheme>GIF</grapheme><phoneme>dʒɪf</phoneme></lexeme>
</lexicon>`;

const spokenOf = (text: string, voice: Voice, lexicons = [parseLexicon(LEXICON)]) => speakable(readScript(text), voice, lexicons).utterances;

describe('speakable', () => {
  it("says a lexicon's alias for its grapheme, mapped to the written word; leaves phonemes to engines that take them", () => {
    const [utterance] = spokenOf('The WHO said GIF.', ENGLISH);
    expect(utterance?.spoken.text).toBe('The World Health Organization said GIF.');
    const at = utterance?.spoken.text.indexOf('Health') ?? -1;
    expect(utterance?.spoken.sourceSpan(at, at + 6)).toEqual({ offset: 4, length: 3 });
    expect(utterance?.spoken.sourceSpan(0, 3)).toEqual({ offset: 0, length: 3 });
  });

  it('reads numbers, money and abbreviations out for English voices only, each word mapped to what it reads', () => {
    const [english] = spokenOf('Dr. Smith paid $15 on 3/15/2024.', ENGLISH, []);
    expect(english?.spoken.text).toBe('Doctor Smith paid fifteen dollars on March fifteenth, twenty twenty-four.');
    const fifteen = english?.spoken.text.indexOf('fifteen dollars') ?? -1;
    expect(english?.spoken.sourceSpan(fifteen, fifteen + 7)).toEqual({ offset: 'Dr. Smith paid '.length, length: 3 });
    expect(spokenOf('Er zahlte 15 Euro.', GERMAN, [])[0]?.spoken.text).toBe('Er zahlte 15 Euro.');
  });

  it('leaves the words SSML gave a reading of alone, and reads the rest of an SSML text', () => {
    const script = speakable(readScript('<speak>On <sub alias="the first">1/1</sub> the WHO paid $2.</speak>'), ENGLISH, [parseLexicon(LEXICON)]);
    expect(script.text).toBe('On 1/1 the WHO paid $2.');
    expect(script.utterances[0]?.spoken.text.replace(/\s+/gu, ' ')).toBe('On the first the World Health Organization paid two dollars.');
  });
});

describe('lexicons and normalization through POST /tts (eSpeak NG)', () => {
  const t = useTestApp({ API_KEYS: 'spoken-text-key-0001' });
  const headers = { authorization: 'Bearer spoken-text-key-0001' };

  it('says an uploaded lexicon alias, timed as the written word', async () => {
    const uploaded = await t.app.inject({ method: 'POST', url: '/lexicons', payload: LEXICON, headers: { ...headers, 'content-type': 'application/pls+xml' } });
    expect(uploaded.statusCode).toBe(201);
    const { id } = uploaded.json<LexiconResponse>();
    const body = { text: 'Ask the WHO today.', voice: ENGLISH.id, format: 'wav', timestamps: true };
    const tts = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/tts', payload, headers }).then((response) => response.json<TtsResponse>());
    const plain = await tts(body);
    const aliased = await tts({ ...body, lexicons: [id] });
    // "World Health Organization" is much longer to say than "W H O" spelled out.
    expect(aliased.duration - plain.duration).toBeGreaterThan(0.5);
    expect(aliased.words?.map((word) => word.word)).toEqual(['Ask', 'the', 'WHO', 'today.']);
    const who = aliased.words?.find((word) => word.word === 'WHO');
    expect((who?.end ?? 0) - (who?.start ?? 0)).toBeGreaterThan(1);
  });

  it('reads money as words, and shows and times it as written', async () => {
    const result = await t.app.inject({ method: 'POST', url: '/tts', payload: { text: 'It costs $1,250 today.', voice: ENGLISH.id, format: 'wav', timestamps: true }, headers });
    const words = result.json<TtsResponse>().words ?? [];
    expect(words.map((word) => word.word)).toEqual(['It', 'costs', '$1,250', 'today.']);
    const money = words[2];
    // "one thousand two hundred fifty dollars": over a second of speech for one written word.
    expect((money?.end ?? 0) - (money?.start ?? 0)).toBeGreaterThan(1);
  });
});
