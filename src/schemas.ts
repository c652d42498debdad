import { Type, type Static } from '@sinclair/typebox';

export const MAX_TTS_TEXT = 5000;
/** About five minutes of narration: a video of that length renders in a few seconds. */
export const MAX_VIDEO_TEXT = 5000;

export const Voice = Type.Object(
  {
    id: Type.String({ description: 'Stable id: `<engine>:<voice>`, e.g. `espeak-ng:en-us`, `flite:slt`.' }),
    name: Type.String({ description: 'Display name.' }),
    language: Type.String({ description: 'BCP-47 language tag, e.g. `en-US`.' }),
    gender: Type.Union([Type.Literal('female'), Type.Literal('male'), Type.Null()], {
      description: 'Gender of the voice where the engine states it, else null.',
    }),
    engine: Type.Union([Type.Literal('espeak-ng'), Type.Literal('flite'), Type.Literal('festival')]),
    sampleRate: Type.Integer({ description: 'Native sample rate in Hz.' }),
    wordTimings: Type.Boolean({ description: 'Whether the engine reports when each word is spoken.' }),
  },
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

const NonBlankText = (maxLength: number) =>
  Type.String({ minLength: 1, maxLength, pattern: '\\S', description: `Text to speak, 1 to ${maxLength} characters.` });

const VoiceId = Type.String({ minLength: 1, maxLength: 100, description: 'A voice id from GET /voices.' });

export const AudioFormat = Type.Union([Type.Literal('mp3'), Type.Literal('wav'), Type.Literal('ogg')], {
  default: 'mp3',
  description: 'mp3 (MPEG-1/2 Layer III), wav (16-bit PCM), ogg (Ogg Vorbis).',
});
export type AudioFormat = Static<typeof AudioFormat>;

export const TtsRequest = Type.Object(
  {
    text: NonBlankText(MAX_TTS_TEXT),
    voice: VoiceId,
    format: Type.Optional(AudioFormat),
    speed: Type.Optional(
      Type.Number({ minimum: 0.5, maximum: 2, default: 1, description: 'Playback speed; pitch is kept.' }),
    ),
  },
  { additionalProperties: false },
);
export type TtsRequest = Static<typeof TtsRequest>;

export const TtsResponse = Type.Object({
  status: Type.Literal('success'),
  url: Type.String({ description: '`<CDN_URL>/audio/<name>.<format>`' }),
  duration: Type.Number({ description: 'Length of the file in seconds.' }),
  cost: Type.Number({ description: 'Price of the request in the currency of `currency`.' }),
  currency: Type.String({ description: 'ISO 4217 code of `cost`.' }),
  format: AudioFormat,
  voice: Type.String(),
  characters: Type.Integer({ description: 'Characters billed (the length of `text`).' }),
  bytes: Type.Integer({ description: 'Size of the file.' }),
});
export type TtsResponse = Static<typeof TtsResponse>;

export const VideoResolution = Type.Union([Type.Literal('1080p'), Type.Literal('720p')], {
  default: '1080p',
  description: 'Shorter side of the frame in pixels: 1080p gives 1920×1080, 1080×1920 or 1080×1080; 720p gives 1280×720, 720×1280 or 720×720.',
});
export type VideoResolution = Static<typeof VideoResolution>;

export const AspectRatio = Type.Union([Type.Literal('16:9'), Type.Literal('9:16'), Type.Literal('1:1')], {
  default: '16:9',
  description: '16:9 landscape, 9:16 portrait (captions stay clear of the bottom fifth, where phone apps put their controls), 1:1 square.',
});
export type AspectRatio = Static<typeof AspectRatio>;

export const FrameRate = Type.Union([Type.Literal('constant'), Type.Literal('variable')], {
  default: 'constant',
  description:
    '`constant`: every frame lasts 1/fps, as upload platforms (YouTube, TikTok, Instagram…) expect. ' +
    '`variable`: one frame per caption change, for web and in-app playback; smaller and about twice as fast to make, ' +
    'and decoded at `fps` it gives exactly the frames of the constant-rate video.',
});
export type FrameRate = Static<typeof FrameRate>;

export const TtsVideoRequest = Type.Object(
  {
    text: NonBlankText(MAX_VIDEO_TEXT),
    voice: VoiceId,
    resolution: Type.Optional(VideoResolution),
    aspect_ratio: Type.Optional(AspectRatio),
    subtitles: Type.Optional(
      Type.Boolean({
        default: true,
        description:
          'Burn captions into the picture: up to two lines at a time, the word being spoken highlighted. ' +
          'With true, text the captions font cannot draw (CJK, Indic, Thai, most emoji) is refused with UNSUPPORTED_TEXT. ' +
          'The WebVTT file (`captionsUrl`) is published either way.',
      }),
    ),
    fps: Type.Optional(
      Type.Integer({ minimum: 24, maximum: 60, default: 30, description: 'Frames per second; words light up on the first frame at or after their start.' }),
    ),
    frame_rate: Type.Optional(FrameRate),
  },
  { additionalProperties: false },
);
export type TtsVideoRequest = Static<typeof TtsVideoRequest>;

export const TtsVideoResponse = Type.Object({
  status: Type.Literal('success'),
  url: Type.String({ description: '`<CDN_URL>/video/<name>.mp4`: H.264 (yuv420p) and AAC in MP4, moov atom first.' }),
  captionsUrl: Type.String({ description: '`<CDN_URL>/captions/<name>.vtt`: the same captions as WebVTT, with word timestamps.' }),
  duration: Type.Number({ description: 'Length of the video in seconds.' }),
  cost: Type.Number({ description: 'Price of the request in the currency of `currency`.' }),
  currency: Type.String({ description: 'ISO 4217 code of `cost`.' }),
  width: Type.Integer(),
  height: Type.Integer(),
  fps: Type.Integer(),
  frameRate: FrameRate,
  subtitles: Type.Boolean({ description: 'Whether captions are burned into the picture.' }),
  voice: Type.String(),
  characters: Type.Integer({ description: 'Characters billed (the length of `text`).' }),
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
