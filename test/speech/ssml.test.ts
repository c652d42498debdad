import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TtsResponse } from '../../src/api/speech.js';
import { Phonemizer } from '../../src/engines/piper/phonemizer.js';
import { withPhonemes } from '../../src/engines/piper/synthesis.js';
import { AppError } from '../../src/errors.js';
import { readScript } from '../../src/speech/read-script.js';
import { MAX_DEPTH, MAX_ELEMENTS, parseSsml } from '../../src/speech/ssml/parse.js';
import { postTts, useTestApp } from '../helpers/helpers.js';
import { meanVolume } from '../helpers/media.js';

const VOICE = 'espeak-ng:en-us';
const PIPER_MODEL = path.join(import.meta.dirname, '../../voices/en_US-joe-medium.onnx');

/** "one" given the IPA of "one two three … eight": over a second longer, and still timed as the one written word. */
async function expectSaidAsPhonemes(app: Parameters<typeof postTts>[0], voice: string): Promise<void> {
  const long = 'wʌn tuː θɹiː fɔːɹ faɪv sɪks sɛvən eɪt';
  const plain = await postTts(app, { text: '<speak>Say one now.</speak>', voice, format: 'wav', timestamps: true });
  const given = await postTts(app, { text: `<speak>Say <phoneme alphabet="ipa" ph="${long}">one</phoneme> now.</speak>`, voice, format: 'wav', timestamps: true });
  expect(given.duration - plain.duration).toBeGreaterThan(1);
  expect(given.words?.map((word) => word.word)).toEqual(['Say', 'one', 'now.']);
  const one = given.words?.[1];
  expect((one?.end ?? 0) - (one?.start ?? 0)).toBeGreaterThan(1.2);
}

function refusal(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected a refusal');
}

describe('SSML parsing', () => {
  it('refuses malformed XML with its line and column', () => {
    const error = refusal(() => parseSsml('<speak>\n  Hello <emphasis>there</speak>'));
    expect(error).toMatchObject({ code: 'INVALID_SSML', statusCode: 400, field: 'text' });
    expect(error.message).toMatch(/line 2, column \d+/u);
  });

  it('names an element it does not speak, and an attribute an element does not take', () => {
    expect(refusal(() => parseSsml('<speak>Hi <audio src="x.mp3"/></speak>')).message).toContain('<audio> is not an element voxreel speaks');
    expect(refusal(() => parseSsml('<speak><break duration="1s"/></speak>')).message).toContain('<break> has no attribute duration');
    expect(refusal(() => parseSsml('<speak><x:y xmlns:x="urn:other"/></speak>')).message).toContain('namespace');
    expect(refusal(() => parseSsml('<p>no speak</p>')).message).toContain('root element must be <speak>');
  });

  it('refuses entity declarations, external entities and nesting or sizes past its bounds, fast', () => {
    const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">${Array.from({ length: 9 }, (_, index) => `<!ENTITY lol${index + 1} "${`&lol${index || ''};`.repeat(10)}">`).join('')}]><speak>&lol9;</speak>`;
    const external = '<!DOCTYPE speak [<!ENTITY file SYSTEM "file:///etc/passwd">]><speak>&file;</speak>';
    const deep = `<speak>${'<s>'.repeat(MAX_DEPTH + 1)}x${'</s>'.repeat(MAX_DEPTH + 1)}</speak>`;
    const many = `<speak>${'<break time="1ms"/>'.repeat(10_000)}</speak>`;
    const started = performance.now();
    expect(refusal(() => parseSsml(laughs)).message).toContain('DOCTYPE');
    expect(refusal(() => parseSsml(external)).message).toContain('DOCTYPE');
    expect(refusal(() => parseSsml(deep)).message).toContain(`nested more than ${MAX_DEPTH}`);
    expect(refusal(() => parseSsml(many)).message).toContain(`more than ${MAX_ELEMENTS} elements`);
    expect(refusal(() => parseSsml('<speak>&unknown;</speak>')).code).toBe('INVALID_SSML');
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('SSML → what is said', () => {
  it('keeps the written text without markup, what sub and say-as say for it, and marks where they stand', () => {
    const script = readScript(
      '<speak><p>Read the <sub alias="World Wide Web">WWW</sub> page <mark name="here"/>at <say-as interpret-as="characters">abc</say-as>.</p>' +
        '<p>Call <say-as interpret-as="telephone">555-1234</say-as> on <say-as interpret-as="date" format="mdy">3/15/2024</say-as>.</p></speak>',
    );
    expect(script.text).toBe('Read the WWW page at A B C.\nCall 555-1234 on 3/15/2024.');
    expect(script.marks).toEqual([{ name: 'here', offset: 'Read the WWW page '.length }]);
    const spoken = script.utterances.map((utterance) => utterance.spoken.text.replace(/\s+/gu, ' ').trim());
    expect(spoken).toEqual(['Read the World Wide Web page at A B C.', 'Call 5 5 5, 1 2 3 4 on March 15th, 2024 .']);
    // The alias's units stand for the written word they replace.
    const [first] = script.utterances;
    const alias = first?.spoken.text.indexOf('World') ?? -1;
    expect(first?.spoken.sourceSpan(alias, alias + 'World Wide Web'.length)).toEqual({ offset: 'Read the '.length, length: 3 });
  });

  it('cuts utterances at breaks, with the break added to the pause that stands there', () => {
    const inside = readScript('<speak>One two <break time="1.5s"/> three four.</speak>');
    expect(inside.utterances.map((utterance) => [utterance.span.text, utterance.pauseBefore])).toEqual([
      ['One two ', undefined],
      ['three four.', expect.closeTo(1.38, 2)],
    ]);
    const between = readScript('<speak><s>One two.</s><break time="500ms"/><s>Three.</s></speak>');
    expect(between.utterances.map((utterance) => utterance.pauseBefore)).toEqual([undefined, expect.closeTo(0.75, 2)]);
  });

  it('reads prosody and emphasis as a rate and a gain, bounded, and refuses values it cannot read', () => {
    const script = readScript('<speak>a <prosody rate="slow" volume="+6dB">b <prosody rate="50%">c</prosody></prosody> <emphasis level="strong">d</emphasis></speak>');
    expect(script.utterances.map((utterance) => [utterance.span.text.trim(), utterance.rate, utterance.volumeDb])).toEqual([
      ['a', 1, 0],
      ['b', 0.8, 6],
      ['c', 0.5, 6],
      ['d', 0.85, 3],
    ]);
    expect(refusal(() => readScript('<speak><prosody rate="quick">x</prosody></speak>')).message).toContain('rate "quick"');
    expect(refusal(() => readScript('<speak><break time="11s"/></speak>')).message).toContain('at most 10s');
    expect(refusal(() => readScript('<speak><say-as interpret-as="vulgar">x</say-as></speak>')).message).toContain('interpret-as "vulgar"');
  });

  it('reads a text that only looks like markup as plain text unless it starts with <speak or says it is SSML', () => {
    expect(readScript('Use <b> for bold.').text).toBe('Use <b> for bold.');
    expect(readScript('<speak>Hi</speak>', 'text').text).toBe('<speak>Hi</speak>');
    expect(readScript('  <speak>Hi</speak>').text).toBe('Hi');
  });
});

describe('SSML through POST /tts (eSpeak NG)', () => {
  const t = useTestApp();
  const tts = (body: Record<string, unknown>) => postTts(t.app, { voice: VOICE, format: 'wav', ...body });
  const post = (body: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/tts', payload: { voice: VOICE, ...body } });

  it('adds a break of 1.5 s as 1.4 to 1.6 s more audio, inside a sentence and between two', async () => {
    const plainInside = await tts({ text: '<speak>One two three four five.</speak>' });
    const brokenInside = await tts({ text: '<speak>One two three <break time="1.5s"/> four five.</speak>' });
    expect(brokenInside.duration - plainInside.duration).toBeGreaterThan(1.4);
    expect(brokenInside.duration - plainInside.duration).toBeLessThan(1.6);
    const plainBetween = await tts({ text: '<speak><s>One two three.</s><s>Four five.</s></speak>' });
    const brokenBetween = await tts({ text: '<speak><s>One two three.</s><break time="1.5s"/><s>Four five.</s></speak>' });
    expect(brokenBetween.duration - plainBetween.duration).toBeGreaterThan(1.4);
    expect(brokenBetween.duration - plainBetween.duration).toBeLessThan(1.6);
  });

  it('spells say-as characters as one timed word each, and times a sub by its written word', async () => {
    const result = await tts({ text: '<speak>Say <say-as interpret-as="characters">ABC</say-as> on the <sub alias="World Wide Web">WWW</sub> now.</speak>', timestamps: true });
    const words = result.words?.map((word) => word.word) ?? [];
    expect(words.slice(0, 4)).toEqual(['Say', 'A', 'B', 'C']);
    expect(words.slice(-2)).toEqual(['WWW', 'now.']);
    const www = result.words?.find((word) => word.word === 'WWW');
    // Three words' worth of speech for one written word.
    expect((www?.end ?? 0) - (www?.start ?? 0)).toBeGreaterThan(0.6);
    for (const word of result.words ?? []) expect('Say A B C on the WWW now.'.slice(word.text_offset, word.text_offset + word.text_length)).toBe(word.word);
  });

  it('makes prosody rate slow longer and x-fast shorter, and volume louder', async () => {
    const sentence = 'The quick brown fox jumps over the lazy dog.';
    const plain = await tts({ text: `<speak>${sentence}</speak>` });
    const slow = await tts({ text: `<speak><prosody rate="slow">${sentence}</prosody></speak>` });
    const fast = await tts({ text: `<speak><prosody rate="x-fast">${sentence}</prosody></speak>` });
    expect(slow.duration / plain.duration).toBeGreaterThan(1.15);
    expect(fast.duration / plain.duration).toBeLessThan(0.75);
    const soft = await tts({ text: `<speak><prosody volume="x-soft">${sentence}</prosody></speak>` });
    const loud = await tts({ text: `<speak><prosody volume="loud">${sentence}</prosody></speak>` });
    const fileOf = (url: string) => path.join(t.outputDir, url.slice(t.config.cdnUrl.length + 1));
    // x-soft is -12 dB, loud +4 dB: some 16 dB apart, less what the peaks held at full scale take.
    expect((await meanVolume(fileOf(loud.url))) - (await meanVolume(fileOf(soft.url)))).toBeGreaterThan(12);
  });

  it('bills the text without its markup, and returns speech marks for sentences, words and marks in time order', async () => {
    const text = '<speak><s>Hello <mark name="name"/>world.</s><s>Bye now.</s></speak>';
    const result = (await tts({ text, marks: true })) as TtsResponse;
    expect(result.characters).toBe('Hello world. Bye now.'.length);
    const marks = result.marks ?? [];
    expect(marks.filter((mark) => mark.type === 'sentence').map((mark) => mark.value)).toEqual(['Hello world.', 'Bye now.']);
    expect(marks.filter((mark) => mark.type === 'word').map((mark) => mark.value)).toEqual(['Hello', 'world.', 'Bye', 'now.']);
    const mark = marks.find((entry) => entry.type === 'ssml');
    const world = marks.find((entry) => entry.value === 'world.');
    expect(mark).toMatchObject({ value: 'name', start: 6, time: world?.time });
    expect(marks.map((entry) => entry.time)).toEqual([...marks.map((entry) => entry.time)].sort((a, b) => a - b));
    expect(result.words).toBeUndefined();
  });

  it('says a word as its <phoneme> IPA on eSpeak NG (spelled in its own phonemes), timed as the written word', async () => {
    await expectSaidAsPhonemes(t.app, VOICE);
  });

  it('answers 400 INVALID_SSML with the place, and 422 for <phoneme> naming the engine', async () => {
    const malformed = await post({ text: '<speak>Hi <break time="1s"></speak>' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ error: { code: 'INVALID_SSML', field: 'text' } });
    expect(malformed.json().error.message).toMatch(/line 1, column \d+/u);
    const phoneme = await post({ text: '<speak><phoneme alphabet="ipa" ph="təˈmɑːtoʊ">tomato</phoneme></speak>', voice: 'flite:slt' });
    expect(phoneme.statusCode).toBe(422);
    expect(phoneme.json()).toMatchObject({ error: { code: 'UNSUPPORTED_SSML' } });
    expect(phoneme.json().error.message).toContain('flite engine');
    expect(phoneme.json().error.message).toContain('phonemes: true');
    const unknownSymbol = await post({ text: '<speak><phoneme alphabet="ipa" ph="ʘa">tomato</phoneme></speak>', format: 'wav' });
    expect(unknownSymbol.statusCode).toBe(422);
    expect(unknownSymbol.json()).toMatchObject({ error: { code: 'UNSUPPORTED_SSML', field: 'text' } });
    expect(unknownSymbol.json().error.message).toContain('"ʘ" (U+0298)');
    const literal = await post({ text: '<speak>Hi</speak>', text_type: 'text', format: 'wav' });
    expect(literal.statusCode).toBe(200);
  });
});

describe('SSML through POST /tts-video and POST /v1/audio/speech', () => {
  const t = useTestApp();
  const fileOf = (url: string) => path.join(t.outputDir, url.slice(t.config.cdnUrl.length + 1));

  it('captions the written words of an SSML video, a sub by its written form, no markup', async () => {
    const text = '<speak><s>Visit the <sub alias="World Wide Web">WWW</sub> today.</s><break time="1s"/><s>See you <emphasis>soon</emphasis>.</s></speak>';
    const response = await t.app.inject({ method: 'POST', url: '/tts-video', payload: { text, voice: VOICE, resolution: '720p' } });
    expect(response.statusCode).toBe(200);
    const body = response.json<{ captionsUrl: string; characters: number; duration: number }>();
    expect(body.characters).toBe('Visit the WWW today. See you soon.'.length);
    const vtt = await readFile(fileOf(body.captionsUrl), 'utf8');
    expect(vtt).toContain('WWW');
    expect(vtt).not.toContain('World Wide Web');
    expect(vtt).not.toMatch(/<(?:speak|sub|break|emphasis|s)\b/u);
  });

  it('speaks SSML given as input to the OpenAI-compatible endpoint', async () => {
    const payload = { model: 'tts-1', voice: VOICE, input: '<speak>Hello <break time="800ms"/> there.</speak>', response_format: 'wav' };
    const response = await t.app.inject({ method: 'POST', url: '/v1/audio/speech', payload });
    expect(response.statusCode).toBe(200);
    const plain = await t.app.inject({ method: 'POST', url: '/v1/audio/speech', payload: { ...payload, input: '<speak>Hello there.</speak>' } });
    // 16-bit mono at the same rate: the break's 0.8 s is in the bytes.
    const seconds = (bytes: number) => bytes / 2 / 24_000;
    expect(seconds(response.rawPayload.length) - seconds(plain.rawPayload.length)).toBeGreaterThan(0.6);
    const malformed = await t.app.inject({ method: 'POST', url: '/v1/audio/speech', payload: { ...payload, input: '<speak>Hello' } });
    expect(malformed.statusCode).toBe(400);
  });
});

describe('SSML phoneme and IPA lexicon entries on a Piper voice', () => {
  it('puts the IPA in place of the phonemes of the words in its span, stress before the vowel, labelled as the first of them', async () => {
    const phonemizer = await Phonemizer.create();
    const text = 'I say tomato now.';
    const plain = phonemizer.phonemize(text, 'en-us');
    const start = text.indexOf('tomato');
    const given = withPhonemes(plain, [{ start, end: start + 6, ipa: 'təˈmɑːtoʊ' }]);
    const said = (phonemized: typeof plain) => phonemized.sentences.map((sentence) => sentence.phonemes.join('')).join('');
    expect(said(plain)).toContain('təmˈeɪɾoʊ');
    // Stress before the vowel, as eSpeak NG writes it and Piper's models learnt it (təˈmɑːtoʊ as written).
    expect(said(given)).toContain('təmˈɑːtoʊ'.normalize('NFD'));
    expect(said(given)).not.toContain('meɪɾ');
    const tomato = plain.wordOffsets.indexOf(start);
    const labels = given.sentences.flatMap((sentence) => sentence.phonemes.flatMap((phoneme, index) => ('ɑː'.includes(phoneme) ? [sentence.wordOf[index]] : [])));
    expect(labels.every((label) => label === tomato)).toBe(true);
  });

  describe.runIf(existsSync(PIPER_MODEL) || Boolean(process.env.CI))('through POST /tts', () => {
    const t = useTestApp();
    const piper = 'piper:en_US-joe-medium';

    it('says a word as its <phoneme> IPA, timed as the written word; a symbol the model lacks is refused, not left unsaid', async () => {
      await expectSaidAsPhonemes(t.app, piper);
      // ʞ (a velar click) is not among this model's phonemes; a typed g is taken as IPA's ɡ.
      const refused = await t.app.inject({ method: 'POST', url: '/tts', payload: { text: '<speak><phoneme alphabet="ipa" ph="ʞa">one</phoneme></speak>', voice: piper } });
      expect(refused.statusCode).toBe(422);
      expect(refused.json()).toMatchObject({ error: { code: 'UNSUPPORTED_SSML', field: 'text' } });
      expect(refused.json().error.message).toContain('"ʞ" (U+029E)');
      const typed = await t.app.inject({ method: 'POST', url: '/tts', payload: { text: '<speak><phoneme alphabet="ipa" ph="ɡoʊ gɛt">one</phoneme></speak>', voice: piper } });
      expect(typed.statusCode, typed.body).toBe(200);
    });

    it("says an IPA lexicon entry on Piper voices, and leaves it out for engines that take no phonemes (Flite)", async () => {
      const lexicon = `<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="en-US">
        <lexeme><grapheme>Qx</grapheme><phoneme>wʌn tuː θɹiː fɔːɹ faɪv sɪks</phoneme></lexeme></lexicon>`;
      const uploaded = await t.app.inject({ method: 'POST', url: '/lexicons', payload: lexicon, headers: { 'content-type': 'application/pls+xml' } });
      const { id } = uploaded.json<{ id: string }>();
      const plain = await postTts(t.app, { text: 'Say Qx now.', voice: piper, format: 'wav' });
      const given = await postTts(t.app, { text: 'Say Qx now.', voice: piper, format: 'wav', lexicons: [id] });
      // Six words said for one spelled out ("Q X").
      expect(given.duration - plain.duration).toBeGreaterThan(0.5);
      const flite = await t.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Say Qx now.', voice: 'flite:slt', format: 'wav', lexicons: [id] } });
      expect(flite.statusCode).toBe(200);
    });
  });
});
