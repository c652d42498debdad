import { AppError } from '../errors.js';
import { MAX_CHAPTERS, MAX_JOB_TEXT } from '../api/fields.js';
import { assertDialogue, dialogueSsml, type DialogueSegment } from '../speech/dialogue.js';
import { writtenText, type TextType } from '../speech/read-script.js';
import { chaptersText, headingCount, type ChapterText } from '../speech/chapters.js';
import { MAX_TTS_TEXT, type TtsRequest, type TtsResponse } from '../api/speech.js';
import { MAX_VIDEO_TEXT, type TtsVideoRequest, type TtsVideoResponse } from '../api/video.js';

/** What a job asks for, exactly as its request gave it (minus how to answer): plain data, so it can wait in Redis. */
export type JobSpec = { operation: 'tts'; request: TtsSpec } | { operation: 'tts-video'; request: TtsVideoSpec };
export type TtsSpec = Omit<TtsRequest, TextField> & { text: string; voice: string };
export type TtsVideoSpec = Omit<TtsVideoRequest, TextField> & { text: string; voice: string };
/** What says how to answer, not what to make (fields.ts AnswerOptions). */
type AnswerField = 'async' | 'webhook_url' | 'webhook_progress';
/** What a job holds as its `text` (and its `voice`, a dialogue's first), not as given. */
type TextField = AnswerField | 'chapters' | 'segments' | 'voice';
export type QueuedOperation = JobSpec['operation'];
export type SpecOf<O extends QueuedOperation> = Extract<JobSpec, { operation: O }>;

/** Short speech jobs go before videos, long jobs after both (lower first); each by its size within its kind would starve nothing more. */
export function jobPriority(spec: JobSpec): number {
  if (isLongJob(spec)) return 3;
  return spec.operation === 'tts' ? 1 : 2;
}

/** Most characters a request of the operation takes at once (synchronously); more make a long job. */
export function syncTextLimit(operation: QueuedOperation): number {
  return operation === 'tts' ? MAX_TTS_TEXT : MAX_VIDEO_TEXT;
}

/**
 * A long job: more text than a request takes at once (up to MAX_JOB_TEXT, asynchronous only). Its audio is spoken
 * into its file as it goes, within the long limits (MAX_LONG_AUDIO_SECONDS...), and checkpointed sentence by
 * sentence so that another run continues it.
 */
export function isLongJob(spec: JobSpec): boolean {
  return specCharacters(spec) > syncTextLimit(spec.operation);
}

/** The characters a job is weighed and billed by: its written text's (SSML without its markup, a dialogue's turns), as the schemas count them. */
export function specCharacters(spec: JobSpec): number {
  return textLength(writtenText(spec.request.text, spec.request.text_type));
}

/** A text over what any request takes at once (MAX_TTS_TEXT and MAX_VIDEO_TEXT are the same): a long job's. */
export function isLongText(characters: number): boolean {
  return characters > Math.max(MAX_TTS_TEXT, MAX_VIDEO_TEXT);
}

/** Characters as the schemas count them (maxLength: code points, an emoji one, not two UTF-16 units). */
export function textLength(text: string): number {
  let surrogatePairs = 0;
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        surrogatePairs += 1;
        index += 1;
      }
    }
  }
  return text.length - surrogatePairs;
}

/** 400 for a long text asked for synchronously: it is taken as an asynchronous job only. */
export function assertAnswerableNow(spec: JobSpec): void {
  if (!isLongJob(spec)) return;
  const limit = syncTextLimit(spec.operation);
  throw new AppError('VALIDATION_ERROR', {
    field: 'text',
    message:
      `The text is ${specCharacters(spec)} characters: a request answered at once takes ${limit} at most. ` +
      `A longer one (up to ${MAX_JOB_TEXT}) is a long job: send "async": true (or Prefer: respond-async, or a webhook_url) and follow GET /jobs/{id}.`,
  });
}

/** The body a synchronous request of each operation gets (the API's response schemas). */
export interface JobAnswers {
  tts: TtsResponse;
  'tts-video': TtsVideoResponse;
}

/** What a finished job answers with: the body a synchronous request gets, and the stored files it points at. */
export interface JobOutcome<O extends QueuedOperation = QueuedOperation> {
  body: JobAnswers[O];
  files: string[];
}

/**
 * A job's outcome as its operation's: queues and caches keep the outcomes of every operation side by side, and a
 * job's outcome is always the one the executor made for its own operation (type-checked there).
 */
export function outcomeOf<O extends QueuedOperation>(_operation: O, outcome: JobOutcome): JobOutcome<O> {
  return outcome as JobOutcome<O>;
}

/**
 * What a request gives its text by: `text`, or `chapters` or `segments` (made into text here), or `book` (its text
 * read by the caller: bookText); and its voice (a dialogue's turns name theirs).
 */
interface TextFields {
  text?: string;
  text_type?: TextType;
  chapters?: ChapterText[];
  segments?: DialogueSegment[];
  book?: string;
  voice?: string;
  async?: boolean;
  webhook_url?: string;
  webhook_progress?: boolean;
}

/**
 * The request as a job: without what only says how to answer (`async`, `webhook_url`, `webhook_progress`), its text
 * given by exactly one of `text`, `chapters` (each title a Markdown heading before its text), `segments` (a dialogue:
 * SSML, its voice the first turn's unless `voice` says; each turn's voice told to `checkVoice`, naming its field) or
 * `book` (left as `text` '' for the caller, which reads the book's, bookText), with at most MAX_CHAPTERS chapters; else
 * 400. Without `segments`, `voice` is required.
 */
export function specOf<T extends TextFields>(request: T, checkVoice?: VoiceCheck): Omit<T, TextField> & { text: string; voice: string } {
  const given = (['text', 'chapters', 'book', 'segments'] as const).filter((field) => request[field] !== undefined);
  if (given.length === 0) throw new AppError('VALIDATION_ERROR', { field: 'text', message: 'text is required (or chapters, or segments: a dialogue, or book: an uploaded EPUB).' });
  if (given.length > 1) throw new AppError('VALIDATION_ERROR', { field: given[1], message: `Give one of ${given.join(' and ')}: each is the whole text.` });
  const spec = { ...request };
  delete spec.async;
  delete spec.webhook_url;
  delete spec.webhook_progress;
  delete spec.chapters;
  delete spec.segments;
  if (request.segments) {
    request.segments.forEach((segment, index) => checkVoice?.(segment.voice, `segments[${index}].voice`));
    return { ...spec, ...dialogueJobText(request.segments, request.voice) };
  }
  if (request.voice === undefined) throw new AppError('VALIDATION_ERROR', { field: 'voice', message: 'voice is required: an id from GET /voices (only a dialogue, `segments`, names a voice for each turn instead).' });
  const text = request.chapters ? chaptersJobText(request.chapters, 'chapters') : (request.text ?? '');
  assertChapterCount(text);
  return { ...spec, text, voice: request.voice };
}

/** Throws 400 UNKNOWN_VOICE (503 ENGINE_UNAVAILABLE) naming `field` for a voice id no engine here speaks. */
export type VoiceCheck = (id: string, field: string) => void;

/**
 * A dialogue as the text a job speaks (dialogue.ts: SSML, a <voice> a turn) and its voice (the request's, else the
 * first turn's); 400 naming `segments` for too many voices, or more text than a job takes (assertDialogue).
 */
function dialogueJobText(segments: readonly DialogueSegment[], voice: string | undefined): { text: string; text_type: 'ssml'; voice: string } {
  assertDialogue(segments, { maxCharacters: MAX_JOB_TEXT, field: 'segments', count: textLength });
  return { text: dialogueSsml(segments), text_type: 'ssml', voice: voice ?? (segments[0] as DialogueSegment).voice };
}

/**
 * Chapters (a request's `chapters`, a book's) as the text a job speaks, each title a Markdown heading; 400 naming
 * `field` when that text is longer than a job takes or has more than MAX_CHAPTERS chapters.
 */
export function chaptersJobText(chapters: readonly ChapterText[], field: 'chapters' | 'book'): string {
  const text = chaptersText(chapters);
  const length = textLength(text);
  if (length > MAX_JOB_TEXT) {
    throw new AppError('VALIDATION_ERROR', {
      field,
      message: `The ${field === 'book' ? 'book has' : 'chapters make a text of'} ${length} characters: a job takes ${MAX_JOB_TEXT} at most. Send them in parts (\`chapters\`), a job each.`,
    });
  }
  assertChapterCount(text, field);
  return text;
}

/** 400 for a text with more chapters (Markdown headings) than MAX_CHAPTERS. */
function assertChapterCount(text: string, field = 'text'): void {
  const count = headingCount(text);
  if (count > MAX_CHAPTERS) throw new AppError('VALIDATION_ERROR', { field, message: `The text has ${count} chapters (Markdown headings): a request takes ${MAX_CHAPTERS} at most.` });
}
