// Chapters of a text: each starts at a Markdown heading (an ATX heading, CommonMark 0.31 §4.2: a line of one to six
// `#`, then a space and the title, the closing `#`s dropped), or comes as `{title, text}` (made into such a text,
// chaptersText). The heading's markup is markup: the written text (what captions show, offsets point into and
// billing counts) keeps its title alone, as an SSML document keeps its words without their tags. After speaking, each
// chapter starts where its title's first word does (chapterTimes).

/** A chapter as the script knows it: its title, and where that title starts in the written text. */
export interface ScriptChapter {
  title: string;
  offset: number;
}

/** A chapter of the finished file: its title, and its start and end in seconds (the next one's start, or the file's end). */
export interface TimedChapter {
  title: string;
  start: number;
  end: number;
}

/** A request's chapter: a title and the text read under it. */
export interface ChapterText {
  title: string;
  text: string;
}

/** Seconds of silence before a chapter's title (its first word is the chapter's start), and between a title and its text. */
export const CHAPTER_PAUSE_SECONDS = 1.5;
export const TITLE_PAUSE_SECONDS = 0.8;

const HEADING = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/gmu;

/** A text's headings: where each line starts and ends, and its title. */
interface Heading {
  lineStart: number;
  lineEnd: number;
  title: string;
}

function headingsOf(text: string): Heading[] {
  const headings: Heading[] = [];
  for (const match of text.matchAll(HEADING)) {
    const title = match[1] ?? '';
    if (!/\S/u.test(title)) continue;
    headings.push({ lineStart: match.index, lineEnd: match.index + match[0].length, title });
  }
  return headings;
}

/** A text without its headings' markup, and its chapters (each title as it stands in that text); none when it has no heading. */
export interface MarkedChapters {
  text: string;
  chapters: ScriptChapter[];
}

export function markdownChapters(source: string): MarkedChapters | undefined {
  const headings = headingsOf(source);
  if (headings.length === 0) return undefined;
  let text = '';
  let copied = 0;
  const chapters: ScriptChapter[] = [];
  for (const heading of headings) {
    text += source.slice(copied, heading.lineStart);
    chapters.push({ title: heading.title, offset: text.length });
    text += heading.title;
    copied = heading.lineEnd;
  }
  text += source.slice(copied);
  return { text, chapters };
}

/** The number of headings (chapters) a text has. */
export function headingCount(text: string): number {
  return headingsOf(text).length;
}

/** `{title, text}` chapters as one text, each under its heading; a title's line breaks become spaces. */
export function chaptersText(chapters: readonly ChapterText[]): string {
  return chapters.map(({ title, text }) => `# ${title.replace(/\s+/gu, ' ').trim()}\n\n${text.trim()}`).join('\n\n');
}

/**
 * Each chapter's span in the file: from its title's first word (the first word at or after its offset; the first
 * chapter from the file's start, the lead-in silence and any text before it with it) to the next one's start.
 */
export function chapterTimes(chapters: readonly ScriptChapter[], words: ReadonlyArray<{ offset: number; start: number }>, duration: number): TimedChapter[] {
  const starts: number[] = [];
  let word = 0;
  for (const [index, chapter] of chapters.entries()) {
    while (word < words.length && (words[word]?.offset ?? Infinity) < chapter.offset) word += 1;
    const start = index === 0 ? 0 : (words[word]?.start ?? duration);
    starts.push(Math.max(start, starts.at(-1) ?? 0));
  }
  return chapters.map((chapter, index) => ({ title: chapter.title, start: starts[index] as number, end: starts[index + 1] ?? duration }));
}
