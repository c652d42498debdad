import { Type, type Static } from '@sinclair/typebox';
import { ASSET_FORMATS, ASSET_KINDS } from '../assets/formats.js';

// Uploaded images and music (POST /assets, GET and DELETE /assets/{id}).

export const AssetKind = Type.Union(ASSET_KINDS.map((kind) => Type.Literal(kind)), {
  description: '`image` (a background picture, a cover), `audio` (a music track), `video` (a background clip, its sound never used) or `book` (an EPUB read as chapters: `book` on /tts and /tts-video).',
});
export type AssetKind = Static<typeof AssetKind>;

export const AssetFormat = Type.Union(
  ASSET_FORMATS.map((format) => Type.Literal(format)),
  {
    description:
      'What the content is, read from its bytes: png, jpeg, webp; wav, mp3, ogg (Vorbis or Opus), m4a (AAC in MP4), aac (ADTS), flac; ' +
      'mp4 and mov (H.264, VP9 or AV1), webm (VP9 or AV1); epub (EPUB 2 or 3, without DRM).',
  },
);
export type AssetFormat = Static<typeof AssetFormat>;

/** The upload as the API documents it: validation is the route's own (multipart is streamed, never a parsed body). */
export const AssetUpload = Type.Object({
  file: Type.String({
    format: 'binary',
    description: 'One file: PNG, JPEG or WebP image; MP3, WAV, OGG (Vorbis, Opus), M4A/AAC or FLAC audio; MP4, MOV or WebM video clip (H.264, VP9, AV1); an EPUB 2 or 3 book without DRM. Recognised by its bytes.',
  }),
});
export type AssetUpload = Static<typeof AssetUpload>;

export const AssetParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 100, description: 'An asset id: 22 characters of base64url.' }) },
  { additionalProperties: false },
);
export type AssetParams = Static<typeof AssetParams>;

export const AssetResponse = Type.Object({
  status: Type.Literal('success'),
  id: Type.String({ description: '128 random bits, base64url (22 characters).' }),
  kind: AssetKind,
  format: AssetFormat,
  bytes: Type.Integer({ description: 'Size of the file.' }),
  width: Type.Optional(Type.Integer({ description: 'Images: width in pixels.' })),
  height: Type.Optional(Type.Integer({ description: 'Images: height in pixels.' })),
  duration: Type.Optional(Type.Number({ description: 'Audio: seconds, as decoded.' })),
  loudness: Type.Optional(Type.Number({ description: 'Audio: integrated loudness in LUFS (EBU R128); music is levelled against the narration with it.' })),
  title: Type.Optional(Type.String({ description: 'Book: its title, from its package.' })),
  chapters: Type.Optional(Type.Integer({ description: 'Book: chapters in its reading order (each a document of its spine with text, titled from its navigation).' })),
  characters: Type.Optional(Type.Integer({ description: 'Book: characters of its chapters\' titles and texts; a job takes MAX_JOB_TEXT (100000) at most.' })),
  created_at: Type.String({ format: 'date-time' }),
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'From then on the asset is gone (404, and refused where a request names it); null when assets are kept.',
  }),
});
export type AssetResponse = Static<typeof AssetResponse>;
