import { digitWords } from './number-words.js';
import { sticky, WORD_END, type Reader } from './reader.js';

const SYMBOLS: Record<string, string> = {
  '.': 'dot', '/': 'slash', '-': 'dash', _: 'underscore', '@': 'at', ':': 'colon', '?': 'question mark', '=': 'equals',
  '&': 'and', '#': 'hash', '~': 'tilde', '%': 'percent', '+': 'plus',
};

/** An address said piece by piece: "www.example.com/docs" W W W dot example dot com slash docs. */
function spelled(address: string): string {
  return address.match(/[A-Za-z]+|\d+|[^A-Za-z\d]/g)!.map((piece) => {
    if (/\d/.test(piece)) return digitWords(piece);
    if (piece === 'www') return 'W W W';
    return /[A-Za-z]/.test(piece) ? piece : (SYMBOLS[piece] ?? '');
  }).filter(Boolean).join(' ');
}

// Bounded as the standards bound them, so that a long run of letters and dashes or dots is not scanned from each word.
const LABEL = String.raw`[A-Za-z\d-]{1,63}`;
const ADDRESS_REST = String.raw`[^\s<>"'()]{0,2000}`;
const TOP_DOMAINS = 'com|org|net|edu|gov|io|dev|app|ai|co|uk|us|eu|de|fr|info|me|tv';
/** Marks that end the sentence around an address rather than the address. */
const TRAILING_MARKS = /[.,;:!?'"’”)\]]+$/;

/** Web addresses with a scheme or www, or a name under a common top-level domain; the scheme is not said. */
const url: Reader = {
  pattern: sticky(
    String.raw`(?:https?://|www\.)${ADDRESS_REST}|(?:${LABEL}\.){1,8}(?:${TOP_DOMAINS})(?![\p{L}\p{N}-])(?:/${ADDRESS_REST})?`,
  ),
  read: ([written]) => {
    const address = written.replace(TRAILING_MARKS, '');
    return { spoken: spelled(address.replace(/^https?:\/\//, '').replace(/\/$/, '')), length: address.length };
  },
};

/** "jane@example.org" jane at example dot org. */
const email: Reader = {
  pattern: sticky(String.raw`[A-Za-z\d._%+-]{1,64}@${LABEL}(?:\.${LABEL}){1,8}${WORD_END}`),
  read: ([written]) => ({ spoken: spelled(written) }),
};

/**
 * Phone numbers, US ("(555) 123-4567", "555-123-4567", "+1 555 123 4567", "555-1234") or international with a plus
 * ("+44 20 7946 0958"): digit by digit, a comma between groups for a pause, the plus said with the country code.
 */
const phone: Reader = {
  pattern: sticky(
    String.raw`(?:(?:\+?1[\s.-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4}|\d{3}-\d{4}|\+\d{1,3}(?:[\s.-]\(?\d{1,4}\)?){2,5})(?![\p{L}\p{N}]|[.-]\d)`,
  ),
  read: ([written]) => ({
    spoken: written.match(/\+?\d+/g)!.map((group) => (group.startsWith('+') ? `plus ${digitWords(group.slice(1))}` : digitWords(group))).join(', '),
  }),
};

export { email, phone, url };
