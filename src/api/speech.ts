import { Type, type Static } from '@sinclair/typebox';
import { AnswerOptions, Billed, BookId, Chapters, DialogueVoice, JobText, LexiconIds, Segments, TextType, TimedChapter } from './fields.js';

export const MAX_TTS_TEXT = 5000;

export const AudioFormat = Type.Union([Type.Literal('mp3'), Type.Literal('wav'), Type.Literal('ogg'), Type.Literal('m4b')], {
  default: 'mp3',
  description:
    'mp3 (MPEG-1/2 Layer III), wav (16-bit PCM), ogg (Ogg Vorbis), m4b (an audiobook: AAC in MP4). A text with chapters gets them in the file: ' +
    'mp3 as ID3 CHAP and CTOC frames, m4b as chapter atoms; wav and ogg have none (they are in `chapters` and `chaptersUrl`).',
});
export type AudioFormat = Static<typeof AudioFormat>;

/** A loudness target for produced audio; reusable by any request that makes a file. */
export const Loudness = Type.Union([Type.Number({ minimum: -40, maximum: -5 }), Type.Literal(false)], {
  default: false,
  description:
    'Integrated loudness to bring the voice to, in LUFS (EBU R128), -40 to -5, with the true peak held at or under -1 dBTP. ' +
    '-14 is what YouTube, Spotify and TikTok normalise to, -16 Apple Podcasts, -23 EBU broadcast. false leaves the voice\'s own level.',
});
export type Loudness = Static<typeof Loudness>;

export const TtsRequest = Type.Object(
  {
    ...AnswerOptions,
    text: Type.Optional(JobText(MAX_TTS_TEXT)),
    chapters: Type.Optional(Chapters),
    segments: Type.Optional(Segments),
    book: Type.Optional(BookId),
    text_type: Type.Optional(TextType),
    marks: Type.Optional(
      Type.Boolean({ default: false, description: 'Also return speech marks: the time of each sentence, word and SSML <mark>, like Amazon Polly\'s.' }),
    ),
    voice: Type.Optional(DialogueVoice),
    format: Type.Optional(AudioFormat),
    speed: Type.Optional(
      Type.Number({ minimum: 0.5, maximum: 2, default: 1, description: 'Playback speed; pitch is kept.' }),
    ),
    timestamps: Type.Optional(
      Type.Boolean({ default: false, description: 'Also return every word with its times in the file, and WebVTT and SRT captions.' }),
    ),
    loudness: Type.Optional(Loudness),
    lexicons: Type.Optional(LexiconIds),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'The title written into the file (mp3 ID3 TIT2, m4b ©nam); a book\'s own by default.' })),
    cover: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'An uploaded image (POST /assets, kind `image`) as the cover of an m4b or mp3 (ID3 APIC); a book\'s own by default.' }),
    ),
  },
  { additionalProperties: false },
);
export type TtsRequest = Static<typeof TtsRequest>;

export const WordTimestamp = Type.Object({
  word: Type.String({ description: 'The word as it stands in `text` (the same as text.substr(text_offset, text_length)).' }),
  start: Type.Number({ description: 'Seconds into the file, after `speed`.' }),
  end: Type.Number({ description: 'Seconds into the file, after `speed`.' }),
  text_offset: Type.Integer({ description: 'UTF-16 offset of the word in `text` exactly as sent.' }),
  text_length: Type.Integer({ description: 'UTF-16 length of the word in `text`.' }),
});
export type WordTimestamp = Static<typeof WordTimestamp>;

export const SpeechMark = Type.Object({
  type: Type.Union([Type.Literal('sentence'), Type.Literal('word'), Type.Literal('ssml')], { description: 'A sentence (an utterance voxreel spoke), a word, or an SSML <mark>.' }),
  time: Type.Number({ description: 'Seconds into the file, after `speed`, where it starts.' }),
  start: Type.Integer({ description: 'UTF-16 offset in the text (without SSML markup) where it starts.' }),
  end: Type.Integer({ description: 'UTF-16 offset where it ends.' }),
  value: Type.String({ description: 'The sentence or word as written, or the mark\'s name.' }),
});
export type SpeechMark = Static<typeof SpeechMark>;

export const TtsResponse = Type.Object({
  status: Type.Literal('success'),
  url: Type.String({ description: '`<CDN_URL>/audio/<name>.<format>`' }),
  duration: Type.Number({ description: 'Length of the file in seconds.' }),
  ...Billed,
  format: AudioFormat,
  bytes: Type.Integer({ description: 'Size of the file.' }),
  words: Type.Optional(Type.Array(WordTimestamp, { description: 'With `timestamps`: every word of `text`, in order.' })),
  captionsUrl: Type.Optional(Type.String({ description: 'With `timestamps` or chapters: `<CDN_URL>/captions/<name>.vtt`, WebVTT of the whole text with word timestamps.' })),
  srtUrl: Type.Optional(Type.String({ description: 'With `timestamps`: `<CDN_URL>/captions/<name>.srt`, the same captions as SRT.' })),
  marks: Type.Optional(Type.Array(SpeechMark, { description: 'With `marks`: sentences, words and SSML marks in the order they are spoken.' })),
  chapters: Type.Optional(Type.Array(TimedChapter, { description: 'A text with chapters (Markdown headings, `chapters`, `book`): each with its span in the file.' })),
  chaptersUrl: Type.Optional(Type.String({ description: 'With chapters: `<CDN_URL>/captions/<name>.chapters.vtt`, WebVTT of the chapters (a cue each, its title as text).' })),
});
export type TtsResponse = Static<typeof TtsResponse>;
