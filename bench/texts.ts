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

const WHO = ['The red boat', 'The old baker', 'A tall sailor', 'The night ferry', 'A young fisher', 'The harbour cat', 'The blue tram', 'A quiet painter', 'The first bus', 'The grey gull'];
const DOES = ['leaves the harbour', 'passes the lighthouse', 'crosses the market', 'waits by the sea wall', 'turns down the lane', 'stops at the bakery', 'climbs the old steps', 'rounds the far pier', 'circles the square', 'slows near the docks'];
const WHEN = ['before dawn', 'at half past six', 'after the rain', 'in the fog', 'as the tide turns', 'at noon', 'under grey clouds', 'at sunset', 'before the storm', 'late at night'];
const HOW = ['every day', 'without a sound', 'once again', 'as always', 'in no hurry', 'with the wind', 'for a while', 'as planned', 'on the dot', 'right on time'];

/** One short sentence (about 60 characters), a different one for each n below 10 000: no cache can answer one with another's audio. */
export function sentenceOf(n: number): string {
  const pick = (words: readonly string[], place: number) => words[Math.floor(n / 10 ** place) % 10] as string;
  return `${pick(WHO, 0)} ${pick(DOES, 1)} ${pick(WHEN, 2)}, ${pick(HOW, 3)}.`;
}
