// An EPUB 2 or 3 book (OCF container, OPF package, EPUB 3 navigation document or EPUB 2 NCX) read as chapters of
// text, for /tts and /tts-video's `book`. Its zip is read by yauzl and its XML by saxes (both maintained; yauzl
// checks each entry's declared size against what it inflates to), within bounds set before a byte is inflated:
// entries, bytes in all and in each, and the inflation ratio (a zip bomb is refused by its own directory).
// A book under DRM (entries encrypted beyond font obfuscation, Adobe's rights.xml) is refused: its text cannot be read.
import path from 'node:path';
import { SaxesParser } from 'saxes';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { AppError } from '../errors.js';

export const BOOK_LIMITS = {
  /** Entries of the zip: a novel has tens to a few hundred (a file per chapter, images, fonts). */
  entries: 2000,
  /** Bytes of all entries inflated. */
  bytes: 64 * 1024 ** 2,
  /** Bytes of one entry inflated. */
  entryBytes: 16 * 1024 ** 2,
  /** Inflated over stored bytes of an entry of more than a megabyte: text deflates some 3 to 10 times, a bomb a thousand. */
  ratio: 100,
  /** Elements of one XML document. */
  elements: 200_000,
};

export interface BookChapter {
  title: string;
  text: string;
}

export interface Book {
  title?: string;
  chapters: BookChapter[];
  /** Characters of all chapters' titles and texts. */
  characters: number;
  /** Its cover image, where the package names one (its bytes only when asked for: `readBook`'s `cover`). */
  cover?: { entry: string; format: 'jpeg' | 'png'; data?: Buffer };
}

/** Encryption of fonts only (IDPF's and Adobe's obfuscation): the text stays readable. */
const FONT_OBFUSCATION = new Set(['http://www.idpf.org/2008/embedding', 'http://ns.adobe.com/pdf/enc#RC']);

const invalid = (message: string) => new AppError('INVALID_ASSET', { field: 'file', message: `The EPUB cannot be read: ${message}` });
const tooLarge = (message: string) => new AppError('ASSET_TOO_LARGE', { field: 'file', message: `The EPUB is refused: ${message}` });

/** A zip's entries by name, read through its central directory only after its size is known to be within bounds. */
class BookZip {
  private constructor(
    private readonly zip: ZipFile,
    readonly entries: ReadonlyMap<string, Entry>,
  ) {}

  static async open(file: string): Promise<BookZip> {
    const zip = await yauzl.openPromise(file, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false }).catch(() => {
      throw invalid('it is not a zip file (an EPUB is one).');
    });
    try {
      if (zip.entryCount > BOOK_LIMITS.entries) throw tooLarge(`it holds ${zip.entryCount} files; a book takes ${BOOK_LIMITS.entries} at most.`);
      const entries = new Map<string, Entry>();
      let total = 0;
      await new Promise<void>((resolve, reject) => {
        zip.on('entry', (entry: Entry) => {
          total += entry.uncompressedSize;
          const ratio = entry.uncompressedSize / Math.max(1, entry.compressedSize);
          if (entry.uncompressedSize > BOOK_LIMITS.entryBytes || total > BOOK_LIMITS.bytes || (entry.uncompressedSize > 1024 ** 2 && ratio > BOOK_LIMITS.ratio)) {
            reject(tooLarge(`its files inflate to more than a book takes (${BOOK_LIMITS.bytes / 1024 ** 2} MB in all, ${BOOK_LIMITS.entryBytes / 1024 ** 2} MB each, ${BOOK_LIMITS.ratio} times their stored size).`));
            return;
          }
          if (entry.isEncrypted()) {
            reject(drm());
            return;
          }
          entries.set(entry.fileName, entry);
          zip.readEntry();
        });
        zip.once('end', () => resolve());
        zip.once('error', () => reject(invalid('its zip directory is damaged.')));
        zip.readEntry();
      });
      return new BookZip(zip, entries);
    } catch (error) {
      zip.close();
      throw error;
    }
  }

  async read(name: string): Promise<Buffer> {
    const entry = this.entries.get(name);
    if (!entry) throw invalid(`${name} is named but missing.`);
    const stream = await this.zip.openReadStreamPromise(entry).catch(() => {
      throw invalid(`${name} cannot be inflated.`);
    });
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of stream) chunks.push(chunk as Buffer);
    } catch {
      throw invalid(`${name} is damaged.`);
    }
    return Buffer.concat(chunks);
  }

  async text(name: string): Promise<string> {
    return (await this.read(name)).toString('utf8');
  }

  close(): void {
    this.zip.close();
  }
}

function drm(): AppError {
  return new AppError('UNSUPPORTED_ASSET', { field: 'file', message: 'The EPUB is encrypted (DRM): its text cannot be read. Upload a book without DRM.' });
}

/** An XML element, its attributes by local name (a prefixed one also by its qualified name), and its children. */
interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: Array<XmlElement | string>;
}

/** The HTML entities books use most, which XHTML's DTD would define (saxes reads no DTD). */
const HTML_ENTITIES: Record<string, string> = {
  nbsp: '\u00a0', ndash: '–', mdash: '—', hellip: '…', lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”', laquo: '«', raquo: '»',
  copy: '©', reg: '®', trade: '™', shy: '', eacute: 'é', egrave: 'è', agrave: 'à', ccedil: 'ç', uuml: 'ü', ouml: 'ö', auml: 'ä', szlig: 'ß', middot: '·', bull: '•', deg: '°',
};

/** A document as a tree (`lenient`: undefined entities and small faults pass, as readers of books let them). */
function parseXml(source: string, name: string, lenient = false): XmlElement {
  const parser = new SaxesParser({ xmlns: true });
  Object.assign(parser.ENTITIES, HTML_ENTITIES);
  const root: XmlElement = { name: '#document', attributes: {}, children: [] };
  const stack: XmlElement[] = [root];
  let elements = 0;
  let failure: string | undefined;
  parser.on('error', (error) => {
    failure ??= error.message;
    if (!lenient) throw invalid(`${name}: ${error.message}`);
  });
  parser.on('opentag', (tag) => {
    elements += 1;
    if (elements > BOOK_LIMITS.elements) throw tooLarge(`${name} has more than ${BOOK_LIMITS.elements} elements.`);
    const attributes: Record<string, string> = {};
    for (const attribute of Object.values(tag.attributes)) {
      attributes[attribute.local] ??= attribute.value;
      attributes[attribute.name] = attribute.value;
    }
    const element: XmlElement = { name: tag.local ?? tag.name, attributes, children: [] };
    stack.at(-1)?.children.push(element);
    stack.push(element);
  });
  parser.on('closetag', () => void stack.pop());
  parser.on('text', (text) => void stack.at(-1)?.children.push(text));
  parser.on('cdata', (text) => void stack.at(-1)?.children.push(text));
  parser.write(source).close();
  if (!lenient && failure) throw invalid(`${name}: ${failure}`);
  return root;
}

function* descendants(element: XmlElement): Generator<XmlElement> {
  for (const child of element.children) {
    if (typeof child === 'string') continue;
    yield child;
    yield* descendants(child);
  }
}

function first(element: XmlElement, name: string): XmlElement | undefined {
  for (const child of descendants(element)) if (child.name === name) return child;
  return undefined;
}
const all = (element: XmlElement, name: string) => [...descendants(element)].filter((child) => child.name === name);
const textOf = (element: XmlElement): string => element.children.map((child) => (typeof child === 'string' ? child : textOf(child))).join('');
const tidy = (text: string) => text.replace(/\s+/gu, ' ').trim();

/** An href of a document in `from` (a zip path) as the zip path it names, its fragment dropped. */
function resolveHref(from: string, href: string): string {
  const [target = ''] = href.split('#');
  let decoded = target;
  try {
    decoded = decodeURIComponent(target);
  } catch {
    // Left as written.
  }
  return path.posix.normalize(path.posix.join(path.posix.dirname(from), decoded)).replace(/^\.\//u, '');
}

/** Elements whose text is not the book's to read aloud: notes and their references, page breaks, scripts. */
const SKIPPED_ELEMENTS = new Set(['script', 'style', 'head', 'nav', 'title', 'svg', 'math', 'rt', 'rp', 'template']);
const NOTE_TYPES = /\b(?:doc-)?(?:footnotes?|endnotes?|rearnotes?|noteref|note|pagebreak|annotation)\b/u;
const BLOCKS = new Set(['p', 'div', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'li', 'blockquote', 'section', 'article', 'header', 'footer', 'tr', 'dd', 'dt', 'figcaption', 'pre', 'br', 'hr', 'table', 'ul', 'ol', 'aside', 'body']);
const HEADINGS = new Set(['h1', 'h2', 'h3']);

function isNote(element: XmlElement): boolean {
  const type = `${element.attributes['epub:type'] ?? element.attributes.type ?? ''} ${element.attributes.role ?? ''}`;
  if (NOTE_TYPES.test(type)) return true;
  // A reference to a note as most books mark it: a superscript that is only a link.
  const [only] = element.children.filter((child) => typeof child !== 'string' || child.trim() !== '');
  return element.name === 'sup' && element.children.length <= 3 && typeof only !== 'string' && only?.name === 'a';
}

/** A content document's paragraphs, and its first heading. */
function documentText(document: XmlElement): { paragraphs: string[]; heading?: string } {
  const paragraphs: string[] = [];
  let current = '';
  let heading: string | undefined;
  const flush = () => {
    const paragraph = tidy(current);
    if (paragraph) paragraphs.push(paragraph);
    current = '';
  };
  const walk = (element: XmlElement) => {
    if (SKIPPED_ELEMENTS.has(element.name) || isNote(element)) return;
    const block = BLOCKS.has(element.name);
    if (block) flush();
    if (HEADINGS.has(element.name) && heading === undefined) heading = tidy(textOf(element)) || undefined;
    for (const child of element.children) {
      if (typeof child === 'string') current += child;
      else walk(child);
    }
    if (block) flush();
  };
  const body = first(document, 'body') ?? document;
  walk(body);
  flush();
  return { paragraphs, ...(heading ? { heading } : {}) };
}

/** The package's navigation: each content document's first title (EPUB 3 nav, else EPUB 2 NCX). */
async function navigationTitles(zip: BookZip, opfPath: string, manifest: Map<string, { href: string; type: string; properties: string }>, tocId: string | undefined): Promise<Map<string, string>> {
  const titles = new Map<string, string>();
  const add = (from: string, href: string | undefined, title: string) => {
    const target = href && resolveHref(from, href);
    if (target && title && !titles.has(target)) titles.set(target, title);
  };
  const nav = [...manifest.values()].find((item) => item.properties.split(/\s+/u).includes('nav'));
  if (nav) {
    const navPath = resolveHref(opfPath, nav.href);
    const document = parseXml(await zip.text(navPath), navPath, true);
    const toc = all(document, 'nav').find((element) => /\btoc\b/u.test(element.attributes['epub:type'] ?? element.attributes.type ?? '')) ?? first(document, 'nav');
    for (const link of toc ? all(toc, 'a') : []) add(navPath, link.attributes.href, tidy(textOf(link)));
    if (titles.size > 0) return titles;
  }
  const ncx = (tocId && manifest.get(tocId)) || [...manifest.values()].find((item) => item.type === 'application/x-dtbncx+xml');
  if (ncx) {
    const ncxPath = resolveHref(opfPath, ncx.href);
    const document = parseXml(await zip.text(ncxPath), ncxPath, true);
    for (const point of all(document, 'navPoint')) {
      const label = first(point, 'navLabel');
      add(ncxPath, first(point, 'content')?.attributes.src, tidy(label ? textOf(label) : ''));
    }
  }
  return titles;
}

/** 415 when the book is under DRM: encrypted entries other than obfuscated fonts, or Adobe's rights file. */
async function refuseDrm(zip: BookZip): Promise<void> {
  if (zip.entries.has('META-INF/rights.xml')) throw drm();
  if (!zip.entries.has('META-INF/encryption.xml')) return;
  const encryption = parseXml(await zip.text('META-INF/encryption.xml'), 'META-INF/encryption.xml', true);
  if (all(encryption, 'EncryptionMethod').some((method) => !FONT_OBFUSCATION.has(method.attributes.Algorithm ?? ''))) throw drm();
}

/** The book's chapters in reading order; 422 INVALID_ASSET, 413 ASSET_TOO_LARGE or 415 UNSUPPORTED_ASSET saying what is wrong. */
export async function readBook(file: string, options: { cover?: boolean } = {}): Promise<Book> {
  const zip = await BookZip.open(file);
  try {
    await refuseDrm(zip);
    if (!zip.entries.has('META-INF/container.xml')) throw invalid('META-INF/container.xml is missing.');
    const container = parseXml(await zip.text('META-INF/container.xml'), 'META-INF/container.xml');
    const opfPath = first(container, 'rootfile')?.attributes['full-path'];
    if (!opfPath) throw invalid('META-INF/container.xml names no package (rootfile).');
    const opf = parseXml(await zip.text(opfPath), opfPath);
    const manifest = new Map(
      all(opf, 'item').map((item) => [item.attributes.id ?? '', { href: item.attributes.href ?? '', type: item.attributes['media-type'] ?? '', properties: item.attributes.properties ?? '' }]),
    );
    const spine = first(opf, 'spine');
    const itemrefs = spine ? all(spine, 'itemref').filter((itemref) => itemref.attributes.linear !== 'no') : [];
    if (itemrefs.length === 0) throw invalid(`${opfPath} has no spine: the book says nothing of its reading order.`);
    const titles = await navigationTitles(zip, opfPath, manifest, spine?.attributes.toc);
    const chapters: BookChapter[] = [];
    for (const itemref of itemrefs) {
      const item = manifest.get(itemref.attributes.idref ?? '');
      if (!item || !/html/u.test(item.type)) continue;
      const documentPath = resolveHref(opfPath, item.href);
      const { paragraphs, heading } = documentText(parseXml(await zip.text(documentPath), documentPath, true));
      if (paragraphs.length === 0) continue;
      const title = titles.get(documentPath) ?? heading;
      const previous = chapters.at(-1);
      // A document the navigation does not name and that has no heading goes on from the one before it.
      if (!title && previous) {
        previous.text += `\n\n${paragraphs.join('\n\n')}`;
        continue;
      }
      // Its heading is its title: said once, as the chapter's.
      const body = paragraphs[0] && title && tidy(paragraphs[0]).toLowerCase() === title.toLowerCase() ? paragraphs.slice(1) : paragraphs;
      if (body.length === 0) continue;
      chapters.push({ title: title ?? `Part ${chapters.length + 1}`, text: body.join('\n\n') });
    }
    if (chapters.length === 0) throw invalid('its reading order holds no text.');
    const bookTitle = tidy(textOf(first(opf, 'title') ?? { name: '', attributes: {}, children: [] }));
    const characters = chapters.reduce((sum, chapter) => sum + chapter.title.length + chapter.text.length, 0);
    const cover = coverOf(opf, opfPath, manifest);
    if (cover && options.cover) cover.data = await zip.read(cover.entry);
    return { ...(bookTitle ? { title: bookTitle } : {}), chapters, characters, ...(cover ? { cover } : {}) };
  } finally {
    zip.close();
  }
}

/** The cover image: EPUB 3's `cover-image` item, else EPUB 2's `<meta name="cover">`; JPEG and PNG only. */
function coverOf(opf: XmlElement, opfPath: string, manifest: Map<string, { href: string; type: string; properties: string }>): Book['cover'] {
  const named = all(opf, 'meta').find((meta) => meta.attributes.name === 'cover')?.attributes.content;
  const item = [...manifest.values()].find((candidate) => candidate.properties.split(/\s+/u).includes('cover-image')) ?? (named ? manifest.get(named) : undefined);
  const format = item?.type === 'image/jpeg' ? 'jpeg' : item?.type === 'image/png' ? 'png' : undefined;
  return item && format ? { entry: resolveHref(opfPath, item.href), format } : undefined;
}
