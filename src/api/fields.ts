import { Type } from '@sinclair/typebox';
import { MAX_REQUEST_VOICES } from '../engines/voice.js';

/** Request fields several operations share. */

export const NonBlankText = (maxLength: number, description = `Text to speak, 1 to ${maxLength} characters.`) =>
  Type.String({ minLength: 1, maxLength, pattern: '\\S', description });

/** Most characters of text an asynchronous /tts or /tts-video job takes (a long job); a synchronous request takes a tenth of that at most. */
export const MAX_JOB_TEXT = 100_000;

/** A queued operation's text: a request's worth at once, a long job's (async) up to MAX_JOB_TEXT; required unless its chapters come otherwise. */
export const JobText = (syncLength: number) =>
  NonBlankText(
    MAX_JOB_TEXT,
    `Text to speak, 1 to ${syncLength} characters; up to ${MAX_JOB_TEXT} in an asynchronous job (\`async\`, \`Prefer: respond-async\` or a webhook), spoken into its file as it goes and continued by another worker should its own stop (docs/api.md, Long jobs). ` +
      'Required, unless `chapters`, `book` or `segments` gives the text. A line that is a Markdown heading (`# Title` to `###### Title`) starts a chapter (docs/api.md, Chapters): its title is said after a pause, its `#`s are markup (not said, shown or billed).',
  );

/** Chapters a request may have (ID3's table of contents counts to 255). */
export const MAX_CHAPTERS = 255;

/** The text as chapters, in place of `text`: each said as a Markdown heading and its text would be. */
export const Chapters = Type.Array(
  Type.Object(
    {
      title: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'The chapter\'s title: said first, after a pause, and its name in the file and in `chapters`.' }),
      text: NonBlankText(MAX_JOB_TEXT, 'The chapter\'s text.'),
    },
    { additionalProperties: false },
  ),
  {
    minItems: 1,
    maxItems: MAX_CHAPTERS,
    description: `In place of \`text\`: 1 to ${MAX_CHAPTERS} chapters, read in order, each title then its text; the text they make (each title as a Markdown heading) is limited and billed as \`text\` is.`,
  },
);

/** Turns a dialogue may have (each is an SSML element inside, and an SSML document takes 1000 at most). */
export const MAX_SEGMENTS = 500;

/** The text as a dialogue, in place of `text`: each turn in its own voice. */
export const Segments = Type.Array(
  Type.Object(
    {
      voice: Type.String({ minLength: 1, maxLength: 100, description: 'The voice of this turn: an id from GET /voices (any engine: voices of other sample rates are resampled to the first one\'s).' }),
      text: NonBlankText(MAX_JOB_TEXT, 'What it says, as plain text.'),
    },
    { additionalProperties: false },
  ),
  {
    minItems: 1,
    maxItems: MAX_SEGMENTS,
    description:
      `In place of \`text\`: a dialogue of 1 to ${MAX_SEGMENTS} turns (at most ${MAX_REQUEST_VOICES} different voices), said in order, each in its voice, ` +
      'with the pause of a turn between speakers (docs/api.md, Dialogue). `voice` may then be left out (the first turn\'s); captions say who speaks (WebVTT `<v Name>`). ' +
      'Limited and billed as `text` is, by the characters of all turns.',
  },
);

/** An uploaded book (POST /assets, an EPUB) as the text. */
export const BookId = Type.String({
  minLength: 1,
  maxLength: 100,
  description:
    'In place of `text`: the id of an uploaded EPUB (POST /assets, kind `book`): its chapters in reading order (the spine), titled from its navigation, notes and scripts left out; its title and cover go into the file (m4b, mp3) unless `title` or `cover` says otherwise.',
});

/** A chapter of a finished file. */
export const TimedChapter = Type.Object({
  title: Type.String(),
  start: Type.Number({ description: 'Seconds into the file where its title\'s first word starts (the first chapter: 0).' }),
  end: Type.Number({ description: 'Seconds into the file where the next chapter starts, or the file ends.' }),
});


export const TextType = Type.Union([Type.Literal('text'), Type.Literal('ssml')], {
  description:
    '`ssml`: the text is an SSML 1.1 document (the subset docs/api.md, SSML, lists); `text`: plain text, markup read as written. ' +
    'Left out: SSML when the text starts with `<speak`. Offsets, captions and billing count the text without its markup.',
});

export const VoiceId = Type.String({ minLength: 1, maxLength: 100, description: 'A voice id from GET /voices.' });

/** The voice of /tts and /tts-video: required, unless the request is a dialogue (`segments`, each turn naming its own). */
export const DialogueVoice = Type.String({ minLength: 1, maxLength: 100, description: 'A voice id from GET /voices. Required, unless `segments` gives each turn its own (then the first turn\'s).' });

/** How to answer, shared by the operations that queue a job. */
export const AnswerOptions = {
  async: Type.Optional(
    Type.Boolean({
      description: 'Default false. Answer 202 at once with a job to poll (GET /jobs/{id}) instead of waiting for the file; `Prefer: respond-async` does the same.',
    }),
  ),
  webhook_url: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'With async: POSTed the finished job, signed (docs/api.md, Webhooks); http(s) only, never a private address unless WEBHOOK_ALLOW_PRIVATE.',
    }),
  ),
  webhook_progress: Type.Optional(
    Type.Boolean({
      description:
        'Default false. With webhook_url: also POST a `job.progress` event, signed as the others, each time another tenth of the job is done (10 % to 90 %): the running job as GET /jobs/{id} shows it. One attempt each (the next one says more); the end is delivered as always.',
    }),
  ),
};

/** What every successful answer says: the price and what was billed. */
export const Billed = {
  cost: Type.Number({ description: 'Price of the request in the currency of `currency`.' }),
  currency: Type.String({ description: 'ISO 4217 code of `cost`.' }),
  voice: Type.String(),
  characters: Type.Integer({ description: 'Characters billed (the length of `text`).' }),
  cached: Type.Optional(
    Type.Boolean({ description: 'The same request was answered before and its file still exists: this is that file, priced at PRICE_CACHE_HIT_FACTOR.' }),
  ),
};

/** Pronunciation lexicons a synthesis request uses (POST /lexicons); the earlier ones win where they overlap. */
export const LexiconIds = Type.Array(Type.String({ minLength: 1, maxLength: 64, description: 'The id of one of your lexicons (POST /lexicons).' }), {
  maxItems: 5,
  description: 'Up to 5 ids of your pronunciation lexicons, applied in this order: where two give a word, the earlier one wins (docs/api.md, Pronunciation lexicons).',
});
