import { Type, type Static } from '@sinclair/typebox';
import { AssetFormat, AssetKind } from '../assets/formats.js';
import { Voice as EngineVoice } from '../engines/voice.js';
import { AspectRatio, BackgroundOption, CaptionFont, CaptionPositionOption, CaptionStyle, FrameRate, HexColour, VideoResolution } from '../video/options.js';

export { AspectRatio, FrameRate, VideoResolution } from '../video/options.js';

export const MAX_TTS_TEXT = 5000;
/** About five minutes of narration: a video of that length renders in a few seconds. */
export const MAX_VIDEO_TEXT = 5000;

/** A voice as GET /voices lists it: the engine's description, and where to hear it. */
export const Voice = Type.Composite(
  [
    EngineVoice,
    Type.Object({
      preview_url: Type.String({
        description: 'A short MP3 of the voice saying a sentence in its language (GET /voices/{id}/preview), absolute, on the host the request was sent to.',
      }),
    }),
  ],
  { $id: 'Voice', additionalProperties: false },
);
export type Voice = Static<typeof Voice>;

export const VoiceList = Type.Object({
  status: Type.Literal('success'),
  voices: Type.Array(Voice),
});
export type VoiceList = Static<typeof VoiceList>;

export const VoicesQuery = Type.Object(
  {
    language: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 35,
        description: 'BCP-47 prefix, case-insensitive: `en` matches en-US and en-GB, `en-GB` only en-GB.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type VoicesQuery = Static<typeof VoicesQuery>;

export const VoiceParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 100, description: 'A voice id from GET /voices (URL-encoded: `espeak-ng%3Aen-us`).' }) },
  { additionalProperties: false },
);
export type VoiceParams = Static<typeof VoiceParams>;

const NonBlankText = (maxLength: number) =>
  Type.String({ minLength: 1, maxLength, pattern: '\\S', description: `Text to speak, 1 to ${maxLength} characters.` });

const VoiceId = Type.String({ minLength: 1, maxLength: 100, description: 'A voice id from GET /voices.' });

export const AudioFormat = Type.Union([Type.Literal('mp3'), Type.Literal('wav'), Type.Literal('ogg')], {
  default: 'mp3',
  description: 'mp3 (MPEG-1/2 Layer III), wav (16-bit PCM), ogg (Ogg Vorbis).',
});
export type AudioFormat = Static<typeof AudioFormat>;

/** A loudness target for produced audio; reusable by any request that makes a file. */
export const Loudness = Type.Union([Type.Number({ minimum: -40, maximum: -5 }), Type.Literal(false)], {
  default: false,
  description:
    'Integrated loudness to bring the voice to, in LUFS (EBU R128), -40 to -5, with the true peak held at or under -1 dBTP. ' +
    '-14 is what YouTube, Spotify and TikTok normalise to, -16 Apple Podcasts, -23 EBU broadcast. false leaves the voice\'s own level.',
});
export type Loudness = Static<typeof Loudness>;

/** How to answer, shared by the operations that queue a job. */
const AnswerOptions = {
  async: Type.Optional(
    Type.Boolean({
      description: 'Default false. Answer 202 at once with a job to poll (GET /jobs/{id}) instead of waiting for the file; `Prefer: respond-async` does the same.',
    }),
  ),
  webhook_url: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'With async: POSTed the finished job, signed (README, Webhooks); http(s) only, never a private address unless WEBHOOK_ALLOW_PRIVATE.',
    }),
  ),
};

export const TtsRequest = Type.Object(
  {
    ...AnswerOptions,
    text: NonBlankText(MAX_TTS_TEXT),
    voice: VoiceId,
    format: Type.Optional(AudioFormat),
    speed: Type.Optional(
      Type.Number({ minimum: 0.5, maximum: 2, default: 1, description: 'Playback speed; pitch is kept.' }),
    ),
    timestamps: Type.Optional(
      Type.Boolean({ default: false, description: 'Also return every word with its times in the file, and WebVTT and SRT captions.' }),
    ),
    loudness: Type.Optional(Loudness),
  },
  { additionalProperties: false },
);
export type TtsRequest = Static<typeof TtsRequest>;

export const WordTimestamp = Type.Object({
  word: Type.String({ description: 'The word as it stands in `text` (the same as text.substr(text_offset, text_length)).' }),
  start: Type.Number({ description: 'Seconds into the file, after `speed`.' }),
  end: Type.Number({ description: 'Seconds into the file, after `speed`.' }),
  text_offset: Type.Integer({ description: 'UTF-16 offset of the word in `text` exactly as sent.' }),
  text_length: Type.Integer({ description: 'UTF-16 length of the word in `text`.' }),
});
export type WordTimestamp = Static<typeof WordTimestamp>;

/** What every successful answer says: the price and what was billed. */
const Billed = {
  cost: Type.Number({ description: 'Price of the request in the currency of `currency`.' }),
  currency: Type.String({ description: 'ISO 4217 code of `cost`.' }),
  voice: Type.String(),
  characters: Type.Integer({ description: 'Characters billed (the length of `text`).' }),
  cached: Type.Optional(
    Type.Boolean({ description: 'The same request was answered before and its file still exists: this is that file, priced at PRICE_CACHE_HIT_FACTOR.' }),
  ),
};

export const TtsResponse = Type.Object({
  status: Type.Literal('success'),
  url: Type.String({ description: '`<CDN_URL>/audio/<name>.<format>`' }),
  duration: Type.Number({ description: 'Length of the file in seconds.' }),
  ...Billed,
  format: AudioFormat,
  bytes: Type.Integer({ description: 'Size of the file.' }),
  words: Type.Optional(Type.Array(WordTimestamp, { description: 'With `timestamps`: every word of `text`, in order.' })),
  captionsUrl: Type.Optional(Type.String({ description: 'With `timestamps`: `<CDN_URL>/captions/<name>.vtt`, WebVTT with word timestamps.' })),
  srtUrl: Type.Optional(Type.String({ description: 'With `timestamps`: `<CDN_URL>/captions/<name>.srt`, the same captions as SRT.' })),
});
export type TtsResponse = Static<typeof TtsResponse>;

export const TtsVideoRequest = Type.Object(
  {
    ...AnswerOptions,
    text: NonBlankText(MAX_VIDEO_TEXT),
    voice: VoiceId,
    resolution: Type.Optional(VideoResolution),
    aspect_ratio: Type.Optional(AspectRatio),
    subtitles: Type.Optional(
      Type.Boolean({
        default: true,
        description:
          'Burn captions into the picture: up to two lines at a time, the word being spoken highlighted. ' +
          'With true, text no shipped font draws (most emoji; scripts beyond Latin, Greek, Cyrillic, Hebrew, Arabic, CJK, Devanagari and Thai) is refused with UNSUPPORTED_TEXT. ' +
          'The WebVTT file (`captionsUrl`) is published either way.',
      }),
    ),
    fps: Type.Optional(
      Type.Integer({ minimum: 24, maximum: 60, default: 30, description: 'Frames per second; words light up on the first frame at or after their start.' }),
    ),
    frame_rate: Type.Optional(FrameRate),
    background: Type.Optional(BackgroundOption),
    caption_style: Type.Optional(CaptionStyle),
    caption_color: Type.Optional(Type.String({ ...HexColour, description: 'Colour of the caption text; default white.' })),
    highlight_color: Type.Optional(Type.String({ ...HexColour, description: 'Colour of the word being spoken; default "#FFD23F".' })),
    font: Type.Optional(CaptionFont),
    position: Type.Optional(CaptionPositionOption),
    font_size: Type.Optional(
      Type.Number({ minimum: 0.5, maximum: 2, default: 1, description: "Caption size, times the style's own (lines get fewer words as it grows)." }),
    ),
    loudness: Type.Optional(
      Type.Union([Type.Number({ minimum: -40, maximum: -5 }), Type.Literal(false)], {
        description:
          'Integrated loudness of the soundtrack in LUFS (EBU R128), true peak at most -1 dBTP; default -14, what YouTube, TikTok and ' +
          "Instagram normalise to (they never turn quiet audio up). false keeps the voice's own level.",
      }),
    ),
    music: Type.Optional(
      Type.Object(
        {
          id: Type.String({ minLength: 1, maxLength: 64, description: 'The id of an audio asset (POST /assets).' }),
          volume: Type.Optional(
            Type.Number({ minimum: -30, maximum: 0, description: 'Its level against the narration in LU, before it ducks under the voice; default -12.' }),
          ),
        },
        { additionalProperties: false, description: 'Music under the narration: looped or cut to length, faded in and out, ducked while the voice speaks.' },
      ),
    ),
  },
  { additionalProperties: false },
);
export type TtsVideoRequest = Static<typeof TtsVideoRequest>;

export const TtsVideoResponse = Type.Object({
  status: Type.Literal('success'),
  url: Type.String({ description: '`<CDN_URL>/video/<name>.mp4`: H.264 (yuv420p) and AAC in MP4, moov atom first.' }),
  duration: Type.Number({ description: 'Length of the video in seconds.' }),
  ...Billed,
  captionsUrl: Type.String({ description: '`<CDN_URL>/captions/<name>.vtt`: the same captions as WebVTT, with word timestamps.' }),
  width: Type.Integer(),
  height: Type.Integer(),
  fps: Type.Integer(),
  frameRate: FrameRate,
  subtitles: Type.Boolean({ description: 'Whether captions are burned into the picture.' }),
  bytes: Type.Integer({ description: 'Size of the video file.' }),
});
export type TtsVideoResponse = Static<typeof TtsVideoResponse>;

export const ErrorBody = Type.Object(
  {
    status: Type.Literal('error'),
    error: Type.Object({
      code: Type.String({ description: 'Stable machine-readable code, see README.' }),
      message: Type.String(),
      field: Type.Optional(Type.String({ description: 'The request field at fault, for validation errors.' })),
      requestId: Type.String(),
    }),
  },
  { $id: 'ErrorBody' },
);
export type ErrorBody = Static<typeof ErrorBody>;

export const JobParams = Type.Object(
  { id: Type.String({ pattern: '^[A-Za-z0-9_-]{22}$', description: 'A job id: 22 characters of base64url.' }) },
  { additionalProperties: false },
);
export type JobParams = Static<typeof JobParams>;

const JobErrorBody = Type.Object({
  code: Type.String(),
  message: Type.String(),
  field: Type.Optional(Type.String()),
  retryAfter: Type.Optional(Type.Number()),
});

export const JobStatus = Type.Object(
  {
    id: Type.String(),
    operation: Type.Union([Type.Literal('tts'), Type.Literal('tts-video')]),
    state: Type.Union(['queued', 'running', 'succeeded', 'failed', 'cancelled'].map((state) => Type.Literal(state)), {
      description: 'queued → running → succeeded, failed or cancelled.',
    }),
    createdAt: Type.String({ format: 'date-time' }),
    startedAt: Type.Optional(Type.String({ format: 'date-time' })),
    finishedAt: Type.Optional(Type.String({ format: 'date-time' })),
    position: Type.Optional(Type.Integer({ description: 'Queued: jobs that run before this one.' })),
    etaSeconds: Type.Optional(Type.Integer({ description: 'Queued or running: expected seconds until it finishes, from measured job times.' })),
    progress: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'Running: percent done.' })),
    result: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Succeeded: the body the synchronous request answers with.' })),
    error: Type.Optional(JobErrorBody),
    expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the job is forgotten (JOB_RETENTION_HOURS after it finished).' })),
  },
  { $id: 'JobStatus' },
);
export type JobStatus = Static<typeof JobStatus>;

export const JobAccepted = Type.Object({
  status: Type.Literal('accepted'),
  id: Type.String({ description: 'The job id.' }),
  statusUrl: Type.String({ description: 'GET it for the state (also in Location).' }),
  state: Type.Literal('queued'),
});
export type JobAccepted = Static<typeof JobAccepted>;

/** OpenAI's limit for `input`. */
export const MAX_SPEECH_INPUT = 4096;

/** What `model` accepts on /v1/audio/speech: OpenAI's names and ours, all the same local synthesis. */
export const SPEECH_MODELS = ['tts-1', 'tts-1-hd', 'gpt-4o-mini-tts', 'gpt-4o-mini-tts-2025-12-15', 'voxreel'] as const;

export const SpeechFormat = Type.Union(
  [Type.Literal('mp3'), Type.Literal('opus'), Type.Literal('aac'), Type.Literal('flac'), Type.Literal('wav'), Type.Literal('pcm')],
  {
    default: 'mp3',
    description:
      'All at 24 kHz mono: mp3 (64 kb/s), opus (Ogg Opus), aac (ADTS), flac, wav (16-bit), pcm (raw 16-bit little-endian). ' +
      'mp3, opus, aac and pcm are sent as they are encoded.',
  },
);
export type SpeechFormat = Static<typeof SpeechFormat>;

const SpeechVoiceName = Type.String({ minLength: 1, maxLength: 100, description: 'An OpenAI voice name (alloy, ash, …) or a voice id from GET /voices.' });

export const SpeechRequest = Type.Object(
  {
    model: Type.Union(
      SPEECH_MODELS.map((id) => Type.Literal(id)),
      { description: 'Any id from GET /v1/models; they all synthesize the same way.' },
    ),
    input: NonBlankText(MAX_SPEECH_INPUT),
    voice: Type.Union([SpeechVoiceName, Type.Object({ id: SpeechVoiceName }, { additionalProperties: false })]),
    instructions: Type.Optional(Type.String({ maxLength: MAX_SPEECH_INPUT, description: 'Accepted and ignored: the local engines take no style instructions.' })),
    response_format: Type.Optional(SpeechFormat),
    speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4, default: 1, description: 'Playback speed; pitch is kept.' })),
    stream_format: Type.Optional(
      Type.Union([Type.Literal('audio'), Type.Literal('sse')], {
        default: 'audio',
        description: '`audio`: the bytes themselves; `sse`: server-sent events `speech.audio.delta` (base64) then `speech.audio.done`.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type SpeechRequest = Static<typeof SpeechRequest>;

export const ModelList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(
    Type.Object({
      id: Type.String(),
      object: Type.Literal('model'),
      created: Type.Integer({ description: 'Unix time.' }),
      owned_by: Type.String(),
    }),
  ),
});
export type ModelList = Static<typeof ModelList>;

/** The error body of the /v1 routes: OpenAI's. */
export const OpenAiErrorBody = Type.Object(
  {
    error: Type.Object({
      message: Type.String(),
      type: Type.String({ description: '`invalid_request_error`, `authentication_error`, `rate_limit_error` or `server_error`.' }),
      param: Type.Union([Type.String(), Type.Null()], { description: 'The request field at fault.' }),
      code: Type.Union([Type.String(), Type.Null()], { description: 'Stable machine-readable code, see README.' }),
    }),
  },
  { $id: 'OpenAiErrorBody' },
);
export type OpenAiErrorBody = Static<typeof OpenAiErrorBody>;

// Assets: uploaded images and music (POST /assets, GET and DELETE /assets/{id}).

export { AssetFormat, AssetKind } from '../assets/formats.js';

/** A request field that names an uploaded asset; `app.assets.resolve` checks it (UNKNOWN_ASSET when it names none). */
export const AssetRef = Type.String({ minLength: 1, maxLength: 64, description: 'The `id` of an asset uploaded with POST /assets.' });

/** The upload as the API documents it: validation is the route's own (multipart is streamed, never a parsed body). */
export const AssetUpload = Type.Object({
  file: Type.String({
    format: 'binary',
    description: 'One file: PNG, JPEG or WebP image; MP3, WAV, OGG (Vorbis, Opus), M4A/AAC or FLAC audio. Recognised by its bytes.',
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
  created_at: Type.String({ format: 'date-time' }),
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'From then on the asset is gone (404, and refused where a request names it); null when assets are kept.',
  }),
});
export type AssetResponse = Static<typeof AssetResponse>;
