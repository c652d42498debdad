import { Type, type Static } from '@sinclair/typebox';
import { MAX_REQUEST_VOICES } from '../engines/voice.js';
import { AspectRatio, BackgroundOption, CaptionCase, CaptionFont, CaptionOutline, CaptionPositionOption, CaptionStyle, Channels, FrameRate, HexColour, Platform, SceneList, TransitionOption, VideoResolution } from './video-options.js';
import { AnswerOptions, Billed, BookId, Chapters, DialogueVoice, JobText, LexiconIds, Segments, TextType, TimedChapter } from './fields.js';

export { AspectRatio, FrameRate, VideoResolution } from './video-options.js';

/** About five minutes of narration: a video of that length renders in a few seconds. */
export const MAX_VIDEO_TEXT = 5000;

export const TtsVideoRequest = Type.Object(
  {
    ...AnswerOptions,
    text: Type.Optional(JobText(MAX_VIDEO_TEXT)),
    chapters: Type.Optional(Chapters),
    book: Type.Optional(BookId),
    segments: Type.Optional(Segments),
    text_type: Type.Optional(TextType),
    voice: Type.Optional(DialogueVoice),
    resolution: Type.Optional(VideoResolution),
    aspect_ratio: Type.Optional(AspectRatio),
    subtitles: Type.Optional(
      Type.Boolean({
        default: true,
        description:
          'Burn captions into the picture: up to two lines at a time, the word being spoken highlighted. ' +
          'Emoji are drawn in colour (Twemoji) and never spoken. ' +
          'With true, text no shipped font draws (scripts beyond Latin, Greek, Cyrillic, Hebrew, Arabic, CJK, Devanagari and Thai) is refused with UNSUPPORTED_TEXT. ' +
          'The WebVTT file (`captionsUrl`) is published either way.',
      }),
    ),
    fps: Type.Optional(
      Type.Integer({ minimum: 24, maximum: 60, default: 30, description: 'Frames per second; words light up on the first frame at or after their start.' }),
    ),
    frame_rate: Type.Optional(FrameRate),
    background: Type.Optional(BackgroundOption),
    scenes: Type.Optional(SceneList),
    transition: Type.Optional(TransitionOption),
    progress_bar: Type.Optional(
      Type.Boolean({
        description:
          'A thin bar along the bottom edge (0.8 % of the height) that grows from left to right with the video, in `highlight_color`. ' +
          'The picture then changes in every frame: it is encoded whole, once (renderPath `moving`), at a constant frame rate.',
      }),
    ),
    platform: Type.Optional(Platform),
    title: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'A title (the hook) shown over the first `title_seconds`, centred at the top of the safe area, the largest text on screen (captions drawn smaller where it needs them to be), in one to three balanced lines, in the captions\' font, colour and case.' }),
    ),
    title_seconds: Type.Optional(Type.Number({ minimum: 0.5, maximum: 10, description: 'How long the title is shown, in seconds; default 3.' })),
    caption_style: Type.Optional(CaptionStyle),
    caption_case: Type.Optional(CaptionCase),
    caption_outline: Type.Optional(CaptionOutline),
    highlight_box: Type.Optional(
      Type.Boolean({
        description:
          'A box in `highlight_color` behind the word being spoken, the word itself in `caption_color` (styles that light a word: karaoke, bold, pop; the subtitle style lights none).',
      }),
    ),
    caption_color: Type.Optional(Type.String({ ...HexColour, description: 'Colour of the caption text; default white.' })),
    speakers: Type.Optional(
      Type.Record(
        Type.String({ minLength: 1, maxLength: 100 }),
        Type.Object(
          {
            caption_color: Type.Optional(Type.String({ ...HexColour, description: 'Colour of this speaker\'s caption text.' })),
            highlight_color: Type.Optional(Type.String({ ...HexColour, description: 'Colour of the word being spoken in this speaker\'s captions.' })),
          },
          { additionalProperties: false },
        ),
        {
          maxProperties: MAX_REQUEST_VOICES,
          description:
            'A dialogue\'s (`segments`, SSML `<voice>`) captions per speaker, keyed by voice id or by the speaker\'s name as the captions give it (a voice\'s name up to its first comma or parenthesis: "Joe"): `{"piper:en_US-joe-medium": {"caption_color": "#7FDBFF"}}`. ' +
            'Speakers left out take a colour of their own from a palette (the first speaker `caption_color`), so that who speaks shows.',
        },
      ),
    ),
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
    channels: Type.Optional(Channels),
    lexicons: Type.Optional(LexiconIds),
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
  chapters: Type.Optional(Type.Array(TimedChapter, { description: 'A text with chapters (Markdown headings, `chapters`, `book`): each with its span in the video, a card with its title shown as it starts.' })),
  chaptersUrl: Type.Optional(Type.String({ description: 'With chapters: `<CDN_URL>/captions/<name>.chapters.vtt`, WebVTT of the chapters.' })),
  renderPath: Type.Optional(
    Type.Union([Type.Literal('spliced'), Type.Literal('plain'), Type.Literal('moving')], {
      description:
        'How the picture was encoded: `spliced` (the background once, captions only where they change: the fast path for still pictures), ' +
        '`plain` (one x264 pass, the fallback should the splicer fail), `moving` (one x264 pass at the veryfast preset: a moving background or a progress bar).',
    }),
  ),
});
export type TtsVideoResponse = Static<typeof TtsVideoResponse>;
