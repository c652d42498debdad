import { describe, expect, it } from 'vitest';
import { dialogueSsml, segmentSpans, speakerTurns } from '../../src/speech/dialogue.js';
import { readScript } from '../../src/speech/read-script.js';
import { resampleSamples } from '../../src/speech/resample.js';
import { TURN_SECONDS } from '../../src/speech/ssml/script.js';

describe('a dialogue as SSML', () => {
  it('finds each segment in the text as read: white space collapsed, markup characters as written, an empty turn where it stands', () => {
    const segments = [
      { voice: 'a', text: '  Hello  there,\n<friend> & "co".  ' },
      { voice: 'b', text: ' \t ' },
      { voice: 'b', text: 'Fine,\u00a0thanks! 👋🏽 Hello there,' },
      { voice: 'a', text: 'Hello there,' },
    ];
    const written = readScript(dialogueSsml(segments)).text;
    const spans = segmentSpans(segments, written);
    expect(spans.map((span) => written.slice(span.offset, span.end))).toEqual(['Hello there, <friend> & "co".', '', 'Fine, thanks! 👋🏽 Hello there,', 'Hello there,']);
    // In order, each after the one before (the last turn's words occur in the third too).
    expect(spans[3]?.offset).toBe(written.lastIndexOf('Hello there,'));
    expect(spans[1]).toEqual({ offset: spans[0]?.end, end: spans[0]?.end });
  });

  it('makes each turn a <voice> of its own, its text as written, a turn\'s pause where the voice changes', () => {
    const ssml = dialogueSsml([
      { voice: 'piper:en_US-joe-medium', text: 'Is 3 < 4 & "5 > 2"? Yes.' },
      { voice: 'kokoro:af_heart', text: '<speak>Not SSML.</speak>' },
      { voice: 'Kokoro:AF_HEART', text: 'Still me.' },
    ]);
    const script = readScript(ssml);
    expect(script.text).toBe('Is 3 < 4 & "5 > 2"? Yes.\n<speak>Not SSML.</speak>\nStill me.');
    expect(script.utterances.map((utterance) => [utterance.span.text.trim(), utterance.voice, utterance.pauseBefore])).toEqual([
      ['Is 3 < 4 & "5 > 2"?', 'piper:en_US-joe-medium', undefined],
      ['Yes.', 'piper:en_US-joe-medium', undefined],
      ['<speak>Not SSML.</speak>', 'kokoro:af_heart', TURN_SECONDS],
      // The same voice, however its id is written: no turn.
      ['Still me.', 'Kokoro:AF_HEART', undefined],
    ]);
  });

  it('names the speakers of its turns by their voices\' short names, or whole where two would read alike', () => {
    const script = readScript(dialogueSsml([{ voice: 'a', text: 'One.' }, { voice: 'b', text: 'Two.' }, { voice: 'c', text: 'Three.' }, { voice: 'a', text: 'Four.' }]));
    const names: Record<string, string> = { a: 'Joe (Piper, medium), US English', b: 'Joe (Piper, low), US English', c: 'SLT, US English' };
    const turns = speakerTurns(script, (utterance) => ({ id: utterance.voice ?? 'a', name: names[utterance.voice ?? 'a'] as string }));
    expect(turns?.map((turn) => [script.text.slice(turn.offset, turn.end).trim(), turn.name])).toEqual([
      ['One.', 'Joe (Piper, medium), US English'],
      ['Two.', 'Joe (Piper, low), US English'],
      ['Three.', 'SLT'],
      ['Four.', 'Joe (Piper, medium), US English'],
    ]);
    expect(speakerTurns(readScript('Plain text, one voice.'), () => ({ id: 'a', name: 'A' }))).toBeUndefined();
  });
});

describe('resampling', () => {
  const tone = (hertz: number, rate: number, seconds = 0.5) => Int16Array.from({ length: Math.round(rate * seconds) }, (_, index) => Math.round(16000 * Math.sin((2 * Math.PI * hertz * index) / rate)));
  const rms = (samples: Int16Array) => Math.sqrt(samples.reduce((sum, value) => sum + value * value, 0) / samples.length);
  /** Zero crossings a second, halved: the frequency of a pure tone. */
  const frequency = (samples: Int16Array, rate: number) => {
    let crossings = 0;
    for (let index = 1; index < samples.length; index += 1) if (((samples[index - 1] as number) < 0) !== ((samples[index] as number) < 0)) crossings += 1;
    return (crossings / 2) * (rate / samples.length);
  };
  // The middle, away from the edges the filter sees half of.
  const middle = (samples: Int16Array) => samples.subarray(Math.round(samples.length * 0.1), Math.round(samples.length * 0.9));

  it('keeps a tone in the band its pitch and level, up and down', () => {
    for (const [from, to] of [[24_000, 22_050], [16_000, 22_050], [22_050, 16_000]] as const) {
      const out = resampleSamples(tone(1000, from), from, to);
      expect(out.length).toBe(Math.round(0.5 * to));
      expect(frequency(middle(out), to)).toBeCloseTo(1000, -1);
      expect(rms(middle(out)) / rms(tone(1000, from))).toBeCloseTo(1, 1);
    }
  });

  it('lets nothing above the lower rate\'s band fold back: an 11.5 kHz tone at 24 kHz is gone at 22.05 kHz', () => {
    const out = resampleSamples(tone(11_500, 24_000), 24_000, 22_050);
    expect(20 * Math.log10(rms(middle(out)) / rms(tone(11_500, 24_000)))).toBeLessThan(-40);
    expect(resampleSamples(tone(1000, 24_000), 24_000, 24_000)).toEqual(tone(1000, 24_000));
  });
});
