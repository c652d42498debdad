/** What every section speaks: plain English prose, the same in the service and in the raw pipelines. */
const SENTENCES = [
  'Every morning the harbour wakes before the town does.',
  'Fishing boats slide out past the lighthouse while the bakery on the corner starts its first batch of bread.',
  'By seven, the market stalls are open, and the smell of coffee drifts along the narrow streets.',
  'Visitors often ask why the houses are painted in such bright colours.',
  'The answer is simple: sailors wanted to find their homes from the sea, even in thick fog.',
  'Today the tradition continues, and every spring the whole street repaints together.',
  'In the afternoon the wind turns, the tide comes in, and children race along the sea wall.',
  'Old fishermen sit on the benches, mending nets and trading stories that grow a little taller each year.',
  'When the sun goes down, the lighthouse takes over again, sweeping its beam across the water.',
  'It is a small place, but people who visit once almost always come back.',
  'Some come for the food, some for the quiet, and some simply to watch the boats return at dusk.',
  'Next week we will follow one of the boats out to sea, from the first light until the catch comes in.',
  'Thank you for watching, and see you next time.',
];

/** About 60 s of speech with eSpeak NG's default rate (200 words in 13 sentences). */
const MINUTE = SENTENCES.join(' ');

/** Exactly `characters` characters of the prose, repeated as needed (the cut may fall inside a word). */
export function textOf(characters: number): string {
  const text = MINUTE.repeat(Math.ceil(characters / MINUTE.length)).slice(0, characters);
  return /\s$/.test(text) ? `${text.slice(0, -1)}.` : text;
}

/** About `seconds` of narration: the minute of prose, scaled by its length in characters (the real length is measured). */
export function narrationOf(seconds: number): string {
  return textOf(Math.round((MINUTE.length * seconds) / 60));
}

/** Runs of marks that issue 10's red team sent inside prose (the service cuts each run to three before any engine). */
const MARK_RUNS = ['.'.repeat(318), ','.repeat(368), '!?;:)'.repeat(80)];

/** Exactly `characters` characters: the prose with MARK_RUNS glued to the ends of words spread through it. */
export function punctuatedOf(characters: number): string {
  const prose = textOf(characters - MARK_RUNS.join('').length);
  let text = '';
  let from = 0;
  MARK_RUNS.forEach((run, index) => {
    const at = prose.indexOf(' ', Math.round((prose.length * (index + 1)) / (MARK_RUNS.length + 1)));
    text += prose.slice(from, at) + run;
    from = at;
  });
  return text + prose.slice(from);
}
