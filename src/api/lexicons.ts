import { Type, type Static } from '@sinclair/typebox';

/** Pronunciation lexicons (POST /lexicons, GET /lexicons, GET and DELETE /lexicons/{id}). */

/** The media types a lexicon is uploaded as (PLS's own, RFC 4267, or plain XML). */
export const LEXICON_MEDIA_TYPES = ['application/pls+xml', 'application/xml', 'text/xml'] as const;

/** The upload as the API documents it: the document is read as text and checked by the handler. */
export const LexiconUpload = Type.String({
  description: 'A W3C PLS 1.0 document (https://www.w3.org/TR/pronunciation-lexicon/), UTF-8, at most 64 KiB (docs/api.md, Pronunciation lexicons).',
});
export type LexiconUpload = Static<typeof LexiconUpload>;

export const LexiconParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 100, description: 'A lexicon id: 22 characters of base64url.' }) },
  { additionalProperties: false },
);
export type LexiconParams = Static<typeof LexiconParams>;

export const LexiconResponse = Type.Object({
  status: Type.Literal('success'),
  id: Type.String({ description: '128 random bits, base64url (22 characters).' }),
  language: Type.String({ description: "The document's xml:lang." }),
  alphabet: Type.Literal('ipa', { description: 'The alphabet of its phonemes: IPA, the only one accepted.' }),
  lexemes: Type.Integer({ description: 'How many lexemes it has.' }),
  bytes: Type.Integer({ description: 'Size of the document.' }),
  created_at: Type.String({ format: 'date-time' }),
});
export type LexiconResponse = Static<typeof LexiconResponse>;

export const LexiconList = Type.Object({
  status: Type.Literal('success'),
  lexicons: Type.Array(Type.Omit(LexiconResponse, ['status']), { description: "The caller's own lexicons, oldest first." }),
});
export type LexiconList = Static<typeof LexiconList>;
