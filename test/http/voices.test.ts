import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { VoiceList } from '../../src/api/voices.js';
import { useTestApp } from '../helpers/helpers.js';

const t = useTestApp();

/** Installed by CI (`npm run voices -- add en_US-joe-medium`); piper.test.ts covers the engine. */
const piperInstalled = existsSync(new URL('../../voices/en_US-joe-medium.onnx.json', import.meta.url));
/** Installed by script/setup (`npm run voices -- add kokoro kokoro:af_heart ...`); kokoro.test.ts covers the engine. */
const kokoroInstalled = existsSync(new URL('../../voices/kokoro/voices/af_heart.bin', import.meta.url));

describe('GET /voices', () => {
  it('lists every engine with complete, unique records', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/voices' });
    expect(response.statusCode).toBe(200);
    const { voices } = response.json<VoiceList>();
    expect(new Set(voices.map((voice) => voice.id)).size).toBe(voices.length);
    expect(voices.filter((voice) => voice.engine === 'espeak-ng').length).toBeGreaterThan(100);
    expect(voices.filter((voice) => voice.engine === 'flite').map((voice) => voice.id).sort()).toEqual(
      ['flite:awb', 'flite:kal16', 'flite:rms', 'flite:slt'],
    );
    for (const voice of voices) {
      expect(voice.id.startsWith(`${voice.engine}:`)).toBe(true);
      expect(voice.language).toMatch(/^[a-z]{2,3}(-[A-Za-z0-9]{1,8})*$/);
      expect(voice.name.length).toBeGreaterThan(0);
      expect(voice.sampleRate).toBeGreaterThanOrEqual(8000);
    }
    expect(voices.find((voice) => voice.id === 'espeak-ng:en-us')).toMatchObject({ language: 'en-US', wordTimings: true, phonemes: true });
    // Which voices take IPA is each engine's to say: the models and eSpeak NG do, the diphone and HTS voices do not.
    const takingIpa = new Set(voices.filter((voice) => voice.phonemes).map((voice) => voice.engine));
    expect([...takingIpa].filter((engine) => !['kokoro', 'piper', 'espeak-ng'].includes(engine))).toEqual([]);
    expect(voices.filter((voice) => voice.engine === 'flite').every((voice) => voice.phonemes === false)).toBe(true);
    expect(voices.filter((voice) => voice.quality !== undefined).every((voice) => voice.engine === 'piper')).toBe(true);
  });

  it.runIf(piperInstalled)('lists the Piper voices of VOICES_DIR', async () => {
    const { voices } = (await t.app.inject({ method: 'GET', url: '/voices?language=en-US' })).json<VoiceList>();
    const piper = voices.filter((voice) => voice.engine === 'piper');
    expect(piper.map((voice) => voice.id)).toContain('piper:en_US-joe-medium');
    for (const voice of piper) expect(voice.quality).toMatch(/^(x_low|low|medium|high)$/);
  });

  it('recommends one voice per language: the most natural installed', async () => {
    const { voices } = (await t.app.inject({ method: 'GET', url: '/voices' })).json<VoiceList>();
    const recommended = voices.filter((voice) => voice.recommended);
    expect(new Set(recommended.map((voice) => voice.language)).size).toBe(recommended.length);
    expect(new Set(recommended.map((voice) => voice.language))).toEqual(new Set(voices.map((voice) => voice.language)));
    const american = recommended.find((voice) => voice.language === 'en-US');
    const has = (id: string) => t.app.engines.findVoice(id) !== undefined;
    const expected = kokoroInstalled ? 'kokoro' : piperInstalled ? 'piper' : has('rhvoice:clb') ? 'rhvoice' : has('festival:slt-hts') ? 'festival' : 'flite';
    expect(american?.engine).toBe(expected);
    expect(recommended.find((voice) => voice.language.startsWith('fr'))?.engine).toBe('espeak-ng');
  });

  it('filters by language prefix, case-insensitively', async () => {
    const english = (await t.app.inject({ method: 'GET', url: '/voices?language=EN' })).json<VoiceList>().voices;
    expect(english.length).toBeGreaterThan(4);
    expect(english.every((voice) => voice.language === 'en' || voice.language.startsWith('en-'))).toBe(true);
    const british = (await t.app.inject({ method: 'GET', url: '/voices?language=en-GB' })).json<VoiceList>().voices;
    expect(british.length).toBeGreaterThan(0);
    expect(british.every((voice) => voice.language.toLowerCase().startsWith('en-gb'))).toBe(true);
    const none = (await t.app.inject({ method: 'GET', url: '/voices?language=xx' })).json<VoiceList>().voices;
    expect(none).toEqual([]);
  });

  it('finds Chinese voices by macrolanguage, member language or region, each listed as people tag it', async () => {
    const ids = async (language: string) =>
      (await t.app.inject({ method: 'GET', url: `/voices?language=${encodeURIComponent(language)}` })).json<VoiceList>().voices.map((voice) => voice.id);
    const chinese = await ids('zh');
    expect(chinese).toEqual(expect.arrayContaining(['espeak-ng:cmn', 'espeak-ng:cmn-latn-pinyin', 'espeak-ng:yue', 'espeak-ng:hak']));
    for (const mandarin of ['zh-CN', 'zh-Hans', 'ZH-cn', 'cmn', 'zh-cmn-Hans-CN']) {
      const found = await ids(mandarin);
      expect(found, mandarin).toContain('espeak-ng:cmn');
      expect(found.filter((id) => /^espeak-ng:(yue|hak)/u.test(id)), mandarin).toEqual([]);
    }
    for (const cantonese of ['yue', 'zh-HK', 'zh-yue']) expect(await ids(cantonese), cantonese).toEqual(['espeak-ng:yue', 'espeak-ng:yue+f3', 'espeak-ng:yue-latn-jyutping', 'espeak-ng:yue-latn-jyutping+f3']);
    expect(await ids('no')).toContain('espeak-ng:nb');
    expect(await ids('arb')).toContain('espeak-ng:ar');
    expect(await ids('en')).toContain('espeak-ng:en-us');
    expect(await ids('qqq')).toEqual([]);
    const { voices } = (await t.app.inject({ method: 'GET', url: '/voices?language=zh' })).json<VoiceList>();
    expect(voices.find((voice) => voice.id === 'espeak-ng:cmn')).toMatchObject({ language: 'zh-CN', engineLanguage: 'cmn' });
    expect(voices.find((voice) => voice.id === 'espeak-ng:yue')).toMatchObject({ language: 'zh-HK', engineLanguage: 'yue' });
    expect(voices.find((voice) => voice.id === 'espeak-ng:hak')).toMatchObject({ language: 'hak' });
    expect(voices.find((voice) => voice.id === 'espeak-ng:hak')).not.toHaveProperty('engineLanguage');
  });
});
