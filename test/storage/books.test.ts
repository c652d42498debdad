import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TtsResponse } from '../../src/api/speech.js';
import { readBook } from '../../src/assets/epub.js';
import { runProcess } from '../../src/media/process.js';
import { epubOf, zipOf, type BookChapterSource } from '../helpers/epub.js';
import { multipartForm, useTestApp } from '../helpers/helpers.js';
import { ffmpeg, runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';

const CHAPTERS: BookChapterSource[] = [
  { title: 'The Harbour', paragraphs: ['The fog lifted over the harbour at dawn.', 'The boats went out one by one.'] },
  { title: 'The Lighthouse', paragraphs: ['An old keeper climbed the stairs every night.'] },
  { title: 'Home Again', paragraphs: ['By evening the boats came back, full of fish.'] },
];

const VOICE = 'flite:slt';

describe('books (EPUB assets)', () => {
  const t = useTestApp();
  const dir = useTempDir('voxreel-books-');

  const upload = async (name: string, bytes: Buffer) => {
    const form = multipartForm([{ name: 'file', filename: name, content: bytes }]);
    return t.app.inject({ method: 'POST', url: '/assets', payload: form.payload, headers: form.headers });
  };

  it('reads an EPUB 3 and an EPUB 2 as chapters: spine order, titles from the navigation, notes and scripts left out', async () => {
    for (const version of [3, 2] as const) {
      const file = path.join(dir, `book-${version}.epub`);
      await writeFile(file, epubOf(CHAPTERS, { version, cover: await png() }));
      const book = await readBook(file);
      expect(book.title).toBe('Harbour Tales');
      expect(book.chapters.map((chapter) => chapter.title)).toEqual(CHAPTERS.map((chapter) => chapter.title));
      expect(book.chapters[0]?.text).toBe('The fog lifted over the harbour at dawn.\n\nThe boats went out one by one.');
      const all = book.chapters.map((chapter) => chapter.text).join(' ');
      expect(all).not.toMatch(/footnote|never read|margin/);
      expect(book.cover).toEqual({ entry: 'OEBPS/images/cover.png', format: 'png' });
    }
  });

  it('takes a book as an asset and reads it into an m4b with its chapters, title and cover', async () => {
    const response = await upload('tales.epub', epubOf(CHAPTERS, { cover: await png() }));
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toMatchObject({ kind: 'book', format: 'epub', title: 'Harbour Tales', chapters: 3 });
    const id = response.json<{ id: string }>().id;
    const tts = await t.app.inject({ method: 'POST', url: '/tts', payload: { book: id, voice: VOICE, format: 'm4b', timestamps: true } });
    expect(tts.statusCode, tts.body).toBe(200);
    const answer = tts.json<TtsResponse>();
    expect(answer.chapters?.map((chapter) => chapter.title)).toEqual(CHAPTERS.map((chapter) => chapter.title));
    expect(answer.words?.map((word) => word.word).join(' ')).toContain('An old keeper climbed');
    const file = path.join(dir, 'tales.m4b');
    await writeFile(file, (await t.fetchFile(answer.url)).body);
    const { stdout } = await runProcess(ffmpeg.tools.ffprobe, ['-v', 'error', '-print_format', 'json', '-show_chapters', '-show_format', '-show_streams', file], { timeoutMs: 30_000 });
    const probed = JSON.parse(stdout.toString('utf8'));
    expect(probed.format.tags.title).toBe('Harbour Tales');
    expect(probed.chapters.map((chapter: { tags: { title: string } }) => chapter.tags.title)).toEqual(CHAPTERS.map((chapter) => chapter.title));
    expect(probed.streams.some((stream: { disposition?: { attached_pic?: number } }) => stream.disposition?.attached_pic === 1)).toBe(true);
    // A book is the whole text: not with text or chapters as well.
    const both = await t.app.inject({ method: 'POST', url: '/tts', payload: { book: id, text: 'Hello.', voice: VOICE } });
    expect(both.statusCode).toBe(400);
  });

  it('refuses a book it cannot read, cleanly: a zip bomb, no spine, 10,000 entries, DRM, a damaged zip', async () => {
    const expectRefused = async (name: string, bytes: Buffer, status: number, code: string, message: RegExp) => {
      const response = await upload(name, bytes);
      expect(response.statusCode, `${name}: ${response.body}`).toBe(status);
      expect(response.json().error).toMatchObject({ code });
      expect(response.json().error.message).toMatch(message);
    };
    const bomb = epubOf(CHAPTERS, { extra: [{ name: 'OEBPS/zeros.bin', data: Buffer.alloc(40 * 1024 ** 2), deflate: true }] });
    expect(bomb.length).toBeLessThan(200 * 1024);
    await expectRefused('bomb.epub', bomb, 413, 'ASSET_TOO_LARGE', /inflate/);
    await expectRefused('spineless.epub', epubOf(CHAPTERS, { spine: false }), 422, 'INVALID_ASSET', /spine/);
    const crowded = epubOf(CHAPTERS, { extra: Array.from({ length: 10_000 }, (_, index) => ({ name: `OEBPS/x/${index}.txt`, data: 'x' })) });
    await expectRefused('crowded.epub', crowded, 413, 'ASSET_TOO_LARGE', /10\d\d\d files/);
    const encryption = `<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/><enc:CipherData><enc:CipherReference URI="OEBPS/text/chapter-0.xhtml"/></enc:CipherData></enc:EncryptedData></encryption>`;
    await expectRefused('drm.epub', epubOf(CHAPTERS, { extra: [{ name: 'META-INF/encryption.xml', data: encryption }] }), 415, 'UNSUPPORTED_ASSET', /DRM/);
    await expectRefused('adobe.epub', epubOf(CHAPTERS, { extra: [{ name: 'META-INF/rights.xml', data: '<rights/>' }] }), 415, 'UNSUPPORTED_ASSET', /DRM/);
    const damaged = epubOf(CHAPTERS).subarray(0, 600);
    await expectRefused('damaged.epub', damaged, 422, 'INVALID_ASSET', /zip/);
    await expectRefused('no-container.epub', zipOf([{ name: 'mimetype', data: 'application/epub+zip' }]), 422, 'INVALID_ASSET', /container/);
    // Font obfuscation is not DRM: such a book is read.
    const fonts = `<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.idpf.org/2008/embedding"/></enc:EncryptedData></encryption>`;
    expect((await upload('fonts.epub', epubOf(CHAPTERS, { extra: [{ name: 'META-INF/encryption.xml', data: fonts }] }))).statusCode).toBe(201);
  });

  it('refuses a book longer than a job takes, naming the field, before anything is queued', async () => {
    const long: BookChapterSource[] = Array.from({ length: 12 }, (_, index) => ({ title: `Part ${index + 1}`, paragraphs: Array.from({ length: 150 }, () => 'The quick brown fox jumps over the lazy dog by the old harbour wall.') }));
    const response = await upload('long.epub', epubOf(long));
    expect(response.statusCode, response.body).toBe(201);
    const tts = await t.app.inject({ method: 'POST', url: '/tts', payload: { book: response.json<{ id: string }>().id, voice: VOICE, async: true } });
    expect(tts.statusCode).toBe(400);
    expect(tts.json().error).toMatchObject({ code: 'VALIDATION_ERROR', field: 'book' });
    expect(tts.json().error.message).toMatch(/characters: a job takes 100000/);
  });

  /** A small PNG, made by ffmpeg. */
  async function png(): Promise<Buffer> {
    const file = path.join(dir, 'cover.png');
    await runFfmpeg(['-y', '-v', 'error', '-f', 'lavfi', '-i', 'color=c=0x3060a0:s=200x300', '-frames:v', '1', file]);
    return readFile(file);
  }
});
