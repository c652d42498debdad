// EPUB files for the tests, built here byte by byte: a zip (APPNOTE 6.3: local headers, central directory, end
// record; entries stored or deflated) of an OCF container, an OPF package and XHTML chapters.
import { crc32, deflateRawSync } from 'node:zlib';

export interface ZipEntry {
  name: string;
  data: Buffer | string;
  /** Deflated (method 8) rather than stored. */
  deflate?: boolean;
}

/** A zip of `entries`, in order. */
export function zipOf(entries: readonly ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const data = Buffer.from(entry.data);
    const stored = entry.deflate ? deflateRawSync(data) : data;
    const name = Buffer.from(entry.name, 'utf8');
    // The fields a local header (from byte 4) and a central record (from byte 6) share, in the same order.
    const shared = (record: Buffer, at: number) => {
      record.writeUInt16LE(20, at);
      record.writeUInt16LE(0x0800, at + 2);
      record.writeUInt16LE(entry.deflate ? 8 : 0, at + 4);
      record.writeUInt32LE(crc32(data), at + 10);
      record.writeUInt32LE(stored.length, at + 14);
      record.writeUInt32LE(data.length, at + 18);
      record.writeUInt16LE(name.length, at + 22);
      return record;
    };
    const header = shared(Buffer.alloc(30), 4);
    header.writeUInt32LE(0x04034b50, 0);
    const record = shared(Buffer.alloc(46), 6);
    record.writeUInt32LE(0x02014b50, 0);
    record.writeUInt16LE(20, 4);
    record.writeUInt32LE(offset, 42);
    locals.push(header, name, stored);
    central.push(record, name);
    offset += header.length + name.length + stored.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

export interface BookChapterSource {
  title: string;
  paragraphs: string[];
}

const CONTAINER = `<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`;

const xhtml = (chapter: BookChapterSource, index: number) =>
  `<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><head><title>${chapter.title}</title><style>p { margin: 0 }</style><script>var x = "never read";</script></head>` +
  `<body><section><h1>${chapter.title}</h1>${chapter.paragraphs.map((paragraph, at) => `<p>${paragraph}${at === 0 ? `<sup><a href="#note${index}" epub:type="noteref">${index + 1}</a></sup>` : ''}</p>`).join('')}` +
  `<aside id="note${index}" epub:type="footnote"><p>A footnote that is never read aloud.</p></aside></section></body></html>`;

/**
 * An EPUB 3 (navigation document) or 2 (NCX) book of these chapters, a cover image, a cover page without text, and
 * `extra` entries; `spine: false` leaves its reading order out.
 */
export function epubOf(chapters: readonly BookChapterSource[], options: { version?: 2 | 3; spine?: boolean; extra?: ZipEntry[]; cover?: Buffer; title?: string } = {}): Buffer {
  const version = options.version ?? 3;
  const items = chapters.map((_, index) => `<item id="c${index}" href="text/chapter-${index}.xhtml" media-type="application/xhtml+xml"/>`).join('');
  const spine = options.spine === false ? '' : `<spine${version === 2 ? ' toc="ncx"' : ''}><itemref idref="cover-page"/>${chapters.map((_, index) => `<itemref idref="c${index}"/>`).join('')}</spine>`;
  const opf =
    `<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="${version}.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">urn:test</dc:identifier><dc:title>${options.title ?? 'Harbour Tales'}</dc:title><dc:language>en</dc:language>${version === 2 ? '<meta name="cover" content="cover-image"/>' : ''}</metadata>` +
    `<manifest><item id="cover-page" href="text/cover.xhtml" media-type="application/xhtml+xml"/>${version === 3 ? '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>' : '<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>'}` +
    `${options.cover ? `<item id="cover-image" href="images/cover.png" media-type="image/png"${version === 3 ? ' properties="cover-image"' : ''}/>` : ''}${items}</manifest>${spine}</package>`;
  const nav = `<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><body><nav epub:type="toc"><ol>${chapters.map((chapter, index) => `<li><a href="text/chapter-${index}.xhtml#start">${chapter.title}</a></li>`).join('')}</ol></nav></body></html>`;
  const ncx = `<?xml version="1.0" encoding="utf-8"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><navMap>${chapters.map((chapter, index) => `<navPoint id="p${index}" playOrder="${index + 1}"><navLabel><text>${chapter.title}</text></navLabel><content src="text/chapter-${index}.xhtml"/></navPoint>`).join('')}</navMap></ncx>`;
  const coverPage = `<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><body><div><img src="../images/cover.png" alt=""/></div></body></html>`;
  return zipOf([
    { name: 'mimetype', data: 'application/epub+zip' },
    { name: 'META-INF/container.xml', data: CONTAINER, deflate: true },
    { name: 'OEBPS/content.opf', data: opf, deflate: true },
    version === 3 ? { name: 'OEBPS/nav.xhtml', data: nav, deflate: true } : { name: 'OEBPS/toc.ncx', data: ncx, deflate: true },
    { name: 'OEBPS/text/cover.xhtml', data: coverPage, deflate: true },
    ...(options.cover ? [{ name: 'OEBPS/images/cover.png', data: options.cover }] : []),
    ...chapters.map((chapter, index) => ({ name: `OEBPS/text/chapter-${index}.xhtml`, data: xhtml(chapter, index), deflate: true })),
    ...(options.extra ?? []),
  ]);
}
