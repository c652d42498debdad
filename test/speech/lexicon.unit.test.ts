// Issue 23: PLS 1.0 documents checked and read (parseLexicon), and where a text's words are said otherwise (lexiconRewrites).
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { LEXICON_LIMITS, lexiconRewrites, parseLexicon, type Lexicon } from '../../src/speech/lexicon.js';

const HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon"';

/** A PLS document of these lexemes (XML inside <lexicon>). */
function pls(lexemes: string, attributes = 'alphabet="ipa" xml:lang="en-US"'): string {
  return `${HEAD} ${attributes}>\n${lexemes}\n</lexicon>\n`;
}

function refusal(xml: string): AppError {
  try {
    parseLexicon(xml);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('the lexicon was accepted');
}

/** A lexicon from [graphemes, alias-or-/ipa/] pairs, as parseLexicon reads it. */
function lexicon(...entries: Array<[string | string[], string]>): Lexicon {
  const lexemes = entries.map(([graphemes, said]) => {
    const spelt = (Array.isArray(graphemes) ? graphemes : [graphemes]).map((g) => `<grapheme>${g}</grapheme>`).join('');
    const pronunciation = said.startsWith('/') ? `<phoneme>${said.slice(1, -1)}</phoneme>` : `<alias>${said}</alias>`;
    return `<lexeme>${spelt}${pronunciation}</lexeme>`;
  });
  return parseLexicon(pls(lexemes.join('\n')));
}

/** The rewrites as `[spoken span, alias or /ipa/]`. */
function said(text: string, lexicons: Lexicon[]): Array<[string, string]> {
  return lexiconRewrites(text, lexicons).map((rewrite) => [text.slice(rewrite.start, rewrite.end), rewrite.alias ?? `/${rewrite.ipa}/`]);
}

describe('parseLexicon', () => {
  it('reads the lexemes, their graphemes (white space collapsed) and pronunciations in document order', () => {
    const read = parseLexicon(
      pls(`<meta name="author" content="me"/>
  <metadata><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description/></rdf:RDF></metadata>
  <!-- a comment -->
  <lexeme role="noun">
    <grapheme>New
      York</grapheme>
    <grapheme>NYC</grapheme>
    <phoneme prefer="false">nuː ˈjɔːk</phoneme>
    <alias prefer="true">New York City</alias>
    <example>I love NYC.</example>
  </lexeme>
  <lexeme><grapheme>W3C</grapheme><alias><![CDATA[World Wide Web Consortium]]></alias></lexeme>`),
    );
    expect(read).toEqual({
      language: 'en-US',
      alphabet: 'ipa',
      lexemes: [
        {
          graphemes: ['New York', 'NYC'],
          pronunciations: [
            { kind: 'ipa', text: 'nuː ˈjɔːk', prefer: false },
            { kind: 'alias', text: 'New York City', prefer: true },
          ],
        },
        { graphemes: ['W3C'], pronunciations: [{ kind: 'alias', text: 'World Wide Web Consortium', prefer: false }] },
      ],
    });
  });

  it('refuses malformed XML with its line and column', () => {
    const error = refusal(pls('<lexeme><grapheme>a</grapheme><alias>b</alias>\n</lexem>'));
    expect(error.code).toBe('INVALID_LEXICON');
    expect(error.statusCode).toBe(400);
    expect(error.message).toMatch(/line 4, column \d+: /);
  });

  it.each([
    ['a DOCTYPE with entities (billion laughs)', `<?xml version="1.0"?>\n<!DOCTYPE lexicon [\n<!ENTITY a "aaaaaaaaaa">\n<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\n<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">\n]>\n<lexicon>&c;</lexicon>`, /line 6, column \d+: a DOCTYPE is not accepted/],
    ['an external entity', '<!DOCTYPE lexicon SYSTEM "file:///etc/passwd">\n<lexicon/>', /line 1, column \d+: a DOCTYPE/],
    ['an undeclared entity', pls('<lexeme><grapheme>&x;</grapheme><alias>b</alias></lexeme>'), /line 3, column \d+: undefined entity/],
    ['another root', '<lexicon xmlns="urn:other" version="1.0"/>', /unknown element <lexicon> \(namespace urn:other\)/],
    ['an unknown element', pls('<lexeme><grapheme>a</grapheme><sound>b</sound></lexeme>'), /line 3, column \d+: .*<lexeme> may not contain <sound>/],
    ['another version', pls('').replace('<lexicon version="1.0"', '<lexicon version="1.1"'), /version="1.0"/],
    ['no xml:lang', pls('', 'alphabet="ipa"'), /needs xml:lang/],
    ['another alphabet', pls('', 'alphabet="x-sampa" xml:lang="en"'), /alphabet="ipa"/],
    ['a phoneme in another alphabet', pls('<lexeme><grapheme>a</grapheme><phoneme alphabet="x-sampa">b</phoneme></lexeme>'), /only the "ipa" alphabet/],
    ['a lexeme without grapheme', pls('<lexeme><alias>b</alias></lexeme>'), /<lexeme> has no <grapheme>/],
    ['a lexeme without pronunciation', pls('<lexeme><grapheme>a</grapheme></lexeme>'), /neither <phoneme> nor <alias>/],
    ['an empty grapheme', pls('<lexeme><grapheme> </grapheme><alias>b</alias></lexeme>'), /<grapheme> is empty/],
    ['a grapheme too long', pls(`<lexeme><grapheme>${'a'.repeat(101)}</grapheme><alias>b</alias></lexeme>`), /longer than 100 characters/],
    ['an alias too long', pls(`<lexeme><grapheme>a</grapheme><alias>${'b '.repeat(101)}</alias></lexeme>`), /<alias> is longer than 200 characters/],
    ['text among lexemes', pls('hello <lexeme><grapheme>a</grapheme><alias>b</alias></lexeme>'), /text is not allowed directly in <lexicon>/],
    ['an unknown attribute', pls('<lexeme><grapheme>a</grapheme><alias speed="2">b</alias></lexeme>'), /<alias> has no attribute "speed"/],
  ])('refuses %s, naming the problem and where', (_name, xml, message) => {
    const error = refusal(xml);
    expect(error.code).toBe('INVALID_LEXICON');
    expect(error.message).toMatch(message);
  });

  it('refuses nesting deeper than the bound, at once', () => {
    const deep = `<metadata>${'<x:a xmlns:x="urn:x">'.repeat(1000)}`;
    const started = performance.now();
    const error = refusal(pls(deep));
    expect(performance.now() - started).toBeLessThan(200);
    expect(error.message).toMatch(new RegExp(`line 3, column \\d+: <x:a> is nested deeper than ${LEXICON_LIMITS.depth} elements`));
  });

  it('refuses more lexemes than the limit', () => {
    const lexemes = '<lexeme><grapheme>a</grapheme><alias>b</alias></lexeme>\n'.repeat(LEXICON_LIMITS.lexemes + 1);
    expect(Buffer.byteLength(pls(lexemes))).toBeLessThan(LEXICON_LIMITS.bytes);
    expect(refusal(pls(lexemes)).message).toMatch(`line ${LEXICON_LIMITS.lexemes + 3}, column 8: more than 1000 lexemes`);
    expect(parseLexicon(pls(lexemes.slice(0, -57))).lexemes).toHaveLength(LEXICON_LIMITS.lexemes);
  });

  it('refuses a document over the byte limit unread', () => {
    const error = refusal(pls(`<!--${'x'.repeat(LEXICON_LIMITS.bytes)}-->`));
    expect(error.code).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('lexiconRewrites', () => {
  it('matches whole words only', () => {
    const lexicons = [lexicon(['SQL', 'sequel'], ['don', 'Donald'], ['C++', 'C plus plus'])];
    expect(said('SQL, MySQL, SQLite and (SQL).', lexicons)).toEqual([
      ['SQL', 'sequel'],
      ['SQL', 'sequel'],
    ]);
    expect(said("don't ask don. 'don'", lexicons)).toEqual([
      ['don', 'Donald'],
      ['don', 'Donald'],
    ]);
    expect(said('C++ and C++11', lexicons)).toEqual([['C++', 'C plus plus']]);
  });

  it('gives UTF-16 offsets in the text as sent', () => {
    const text = '😀 Café ok';
    const [rewrite] = lexiconRewrites(text, [lexicon(['Café', 'cafe'])]);
    expect(rewrite).toEqual({ start: 3, end: 7, alias: 'cafe' });
    expect(lexiconRewrites('Cafés', [lexicon(['Café', 'cafe'])])).toEqual([]);
  });

  it('matches multi-word graphemes across any white space', () => {
    const lexicons = [lexicon(['New York', '/nuː ˈjɔːk/'])];
    expect(lexiconRewrites('From New  York\nto New\tYork.', lexicons)).toEqual([
      { start: 5, end: 14, ipa: 'nuː ˈjɔːk' },
      { start: 18, end: 26, ipa: 'nuː ˈjɔːk' },
    ]);
    expect(said('New Yorker', lexicons)).toEqual([]);
  });

  it('is case-sensitive', () => {
    expect(said('US us Us', [lexicon(['US', 'United States'])])).toEqual([['US', 'United States']]);
  });

  it('takes the longest match at a position, then goes on from its end', () => {
    const lexicons = [lexicon(['New', 'Gnu'], ['New York', 'Big Apple'], ['York', 'Eboracum'])];
    expect(said('New York, New Jersey, York', lexicons)).toEqual([
      ['New York', 'Big Apple'],
      ['New', 'Gnu'],
      ['York', 'Eboracum'],
    ]);
  });

  it('lets an earlier lexicon win, and within one the preferred pronunciation, else the first', () => {
    const first = lexicon(['tomato', 'tomahto']);
    const second = lexicon(['tomato', 'tomayto'], ['potato', 'potahto']);
    expect(said('tomato potato', [first, second])).toEqual([
      ['tomato', 'tomahto'],
      ['potato', 'potahto'],
    ]);
    expect(said('tomato', [second, first])).toEqual([['tomato', 'tomayto']]);

    const preferring = parseLexicon(
      pls(`<lexeme><grapheme>read</grapheme><phoneme>riːd</phoneme></lexeme>
  <lexeme><grapheme>read</grapheme><alias>red</alias><phoneme prefer="true">rɛd</phoneme></lexeme>
  <lexeme><grapheme>lead</grapheme><alias>leed</alias><phoneme>lɛd</phoneme></lexeme>`),
    );
    expect(said('read lead', [preferring])).toEqual([
      ['read', '/rɛd/'],
      ['lead', 'leed'],
    ]);
  });

  it('finds nothing without lexicons or matches', () => {
    expect(lexiconRewrites('anything', [])).toEqual([]);
    expect(lexiconRewrites('', [lexicon(['a', 'b'])])).toEqual([]);
  });
});
