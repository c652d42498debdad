// A written audio file given its chapters, title and cover, where its container holds them: mp3 an ID3v2.3 tag put
// before its first frame (CTOC and CHAP frames, ID3v2 Chapter Frame Addendum 1.0; TIT2; APIC), written here; m4b
// (AAC in MP4) remuxed by ffmpeg from an FFMETADATA file (chapter atoms, the MP4 `covr` from the cover); wav and ogg
// keep none (the chapters are in the answer and their WebVTT: ffmpeg
// 5.1 copies a Vorbis stream's comments as they were, chapters left out). The file is replaced whole, or left as it was.
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { Ffmpeg } from '../media/ffmpeg.js';
import { M4B_MUXER, type AudioEncoding } from './audio-encoding.js';
import type { TimedChapter } from './chapters.js';

/** What a file is tagged with: its chapters, a title and a cover picture (JPEG or PNG, its bytes). */
export interface AudioTags {
  chapters: readonly TimedChapter[];
  title?: string;
  cover?: { data: Buffer; format: 'jpeg' | 'png' };
}

/** Encodings whose container takes chapters. */
export const CHAPTERED_ENCODINGS: ReadonlySet<AudioEncoding> = new Set(['mp3', 'm4b']);

/** Most chapters one file takes: an ID3 table of contents counts its entries in one byte. */
export const MAX_FILE_CHAPTERS = 255;

/** Tags the audio file at `file` (of `encoding`) where its container has room for them; nothing to tag, nothing done. */
export async function tagAudio(ffmpeg: Ffmpeg, file: string, encoding: AudioEncoding, tags: AudioTags, signal?: AbortSignal): Promise<void> {
  if (!CHAPTERED_ENCODINGS.has(encoding) || (tags.chapters.length === 0 && !tags.title && !tags.cover)) return;
  await replaceTagged(ffmpeg, file, encoding, tags, signal);
}

async function replaceTagged(ffmpeg: Ffmpeg, file: string, encoding: AudioEncoding, tags: AudioTags, signal?: AbortSignal): Promise<void> {
  const tagged = `${file}.tagged`;
  try {
    if (encoding === 'mp3') {
      const tag = id3Tag(tags);
      await writeFile(tagged, tag);
      await pipeline(createReadStream(file), createWriteStream(tagged, { flags: 'a' }), { signal });
    } else {
      await remux(ffmpeg, file, tagged, tags, signal);
    }
    await rename(tagged, file);
  } finally {
    await rm(tagged, { force: true });
    await rm(`${file}.ffmetadata`, { force: true });
    await rm(`${file}.cover`, { force: true });
  }
}

/** An MP4 written again around the same samples, with the tags' chapters, title and cover. */
async function remux(ffmpeg: Ffmpeg, file: string, output: string, tags: AudioTags, signal?: AbortSignal): Promise<void> {
  const metadata = `${file}.ffmetadata`;
  await writeFile(metadata, ffmetadata(tags));
  const { cover } = tags;
  if (cover) await writeFile(`${file}.cover`, cover.data);
  await ffmpeg.run({
    inputs: [{ source: file }, { source: metadata, options: ['-f', 'ffmetadata'] }, ...(cover ? [{ source: `${file}.cover`, options: ['-f', cover.format === 'png' ? 'png_pipe' : 'jpeg_pipe'] }] : [])],
    outputOptions: [
      '-map', '0:a', '-map_metadata', '1', '-map_chapters', '1', '-c', 'copy',
      ...(cover ? ['-map', '2:v', '-disposition:v:0', 'attached_pic'] : []),
      ...M4B_MUXER,
    ],
    output,
    signal,
  });
}

/** FFMETADATA1 (ffmpeg's metadata format): the title, then each chapter in milliseconds; `=;#\` and line breaks escaped. */
export function ffmetadata(tags: AudioTags): string {
  const escape = (value: string) => value.replace(/[=;#\\\n]/gu, (character) => `\\${character}`);
  const lines = [';FFMETADATA1', ...(tags.title ? [`title=${escape(tags.title)}`] : [])];
  for (const chapter of tags.chapters) {
    lines.push('[CHAPTER]', 'TIMEBASE=1/1000', `START=${Math.round(chapter.start * 1000)}`, `END=${Math.round(chapter.end * 1000)}`, `title=${escape(chapter.title)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** An ID3v2.3 tag: TIT2, APIC (the cover), a CTOC of every chapter in order, then each CHAP with its TIT2. */
export function id3Tag(tags: AudioTags): Buffer {
  const frames: Buffer[] = [];
  if (tags.title) frames.push(textFrame('TIT2', tags.title));
  if (tags.cover) {
    const mime = Buffer.from(`image/${tags.cover.format}\0`, 'latin1');
    // Latin-1 text, the MIME type, picture type 3 (front cover), an empty description.
    frames.push(frame('APIC', Buffer.concat([Buffer.of(0), mime, Buffer.of(3, 0), tags.cover.data])));
  }
  const chapters = tags.chapters.slice(0, MAX_FILE_CHAPTERS);
  if (chapters.length > 0) {
    const ids = chapters.map((_, index) => `ch${index}`);
    // Top-level (0x02) and ordered (0x01), the entry count, each child's id.
    frames.push(frame('CTOC', Buffer.concat([latin1Z('toc'), Buffer.of(0x03, ids.length), ...ids.map(latin1Z)])));
    chapters.forEach((chapter, index) => {
      const times = Buffer.alloc(16);
      times.writeUInt32BE(Math.round(chapter.start * 1000), 0);
      times.writeUInt32BE(Math.round(chapter.end * 1000), 4);
      // No byte offsets: 0xFFFFFFFF says the times are what count.
      times.writeUInt32BE(0xffffffff, 8);
      times.writeUInt32BE(0xffffffff, 12);
      frames.push(frame('CHAP', Buffer.concat([latin1Z(ids[index] as string), times, textFrame('TIT2', chapter.title)])));
    });
  }
  const body = Buffer.concat(frames);
  const header = Buffer.from('ID3\x03\x00\x00', 'latin1');
  return Buffer.concat([header, syncSafe(body.length), body]);
}

function latin1Z(text: string): Buffer {
  return Buffer.from(`${text}\0`, 'latin1');
}

/** A text frame in UTF-16 with its byte order mark (encoding 1), which says any script. */
function textFrame(id: string, text: string): Buffer {
  return frame(id, Buffer.concat([Buffer.of(1, 0xff, 0xfe), Buffer.from(text, 'utf16le')]));
}

/** An ID3v2.3 frame: its id, its size (a plain 32-bit number in 2.3), no flags. */
function frame(id: string, body: Buffer): Buffer {
  const header = Buffer.alloc(10);
  header.write(id, 0, 'latin1');
  header.writeUInt32BE(body.length, 4);
  return Buffer.concat([header, body]);
}

/** A tag's size in 4 bytes of 7 bits each (ID3v2 §3.1). */
function syncSafe(size: number): Buffer {
  return Buffer.of((size >> 21) & 0x7f, (size >> 14) & 0x7f, (size >> 7) & 0x7f, size & 0x7f);
}
