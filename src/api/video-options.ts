import { Type, type Static } from '@sinclair/typebox';
import { CAPTION_CASES, CAPTION_POSITIONS, CAPTION_STYLES, STYLE_PRESETS } from '../video/caption-style.js';
import { PLATFORM_NAMES, PLATFORMS } from '../video/platforms.js';
import { CAPTION_FAMILIES } from '../video/font.js';
import { MOTIONS } from '../video/background.js';
import { CROSSFADE_SECONDS, MAX_SCENES, TRANSITIONS } from '../video/scenes.js';
import { ASPECT_RATIOS, FRAME_RATES, RESOLUTIONS } from '../video/frame-shapes.js';
import { CHANNEL_COUNTS } from '../video/soundtrack.js';

export const VideoResolution = Type.Union(RESOLUTIONS.map((resolution) => Type.Literal(resolution)), {
  description:
    'Default 1080p (or the platform\'s). Shorter side of the frame in pixels: 1080p gives 1920×1080, 1080×1920, 1080×1080 or 1080×1350; 720p gives 1280×720, ' +
    '720×1280 or 720×720, and for 4:5 576×720 (720 high).',
});
export type VideoResolution = Static<typeof VideoResolution>;

export const AspectRatio = Type.Union(ASPECT_RATIOS.map((ratio) => Type.Literal(ratio)), {
  description:
    'Default 16:9 (or the platform\'s). 16:9 landscape, 9:16 portrait (captions stay clear of the bottom fifth, where phone apps put their controls), 1:1 square, ' +
    "4:5 Instagram's feed size (captions clear of its bottom corners' buttons and of the profile grid's 3:4 crop).",
});
export type AspectRatio = Static<typeof AspectRatio>;

export const Channels = Type.Union(CHANNEL_COUNTS.map((count) => Type.Literal(count)), {
  description:
    'Audio channels: 2 (stereo: the music keeps its stereo image, the voice centred) by default with music, 1 (mono) ' +
    'without: a voice alone sounds the same in mono, and mono AAC takes half the time and bytes.',
});

export const FrameRate = Type.Union(FRAME_RATES.map((rate) => Type.Literal(rate)), {
  default: 'constant',
  description:
    '`constant`: every frame lasts 1/fps, as upload platforms (YouTube, TikTok, Instagram…) expect. ' +
    '`variable`: one frame per caption change, for web and in-app playback; smaller and a little faster to make, ' +
    'and decoded at `fps` it gives exactly the frames of the constant-rate video.',
});
export type FrameRate = Static<typeof FrameRate>;

export const HexColour = Type.String({ pattern: '^#?[0-9A-Fa-f]{6}$', description: 'An sRGB colour as hex, e.g. "#FFD23F".' });

export const CaptionStyle = Type.Union(
  CAPTION_STYLES.map((style) => Type.Literal(style)),
  {
    default: 'karaoke',
    description: CAPTION_STYLES.map((style) => `\`${style}\`: ${STYLE_PRESETS[style].description}`).join(' '),
  },
);

export const CaptionPositionOption = Type.Union(
  CAPTION_POSITIONS.map((position) => Type.Literal(position)),
  { description: 'Where the captions sit inside the safe area; by default the style\'s own (`bold`: middle, the others: bottom).' },
);

export const CaptionFont = Type.Union(
  CAPTION_FAMILIES.map((family) => Type.Literal(family)),
  {
    default: 'sans',
    description:
      '`sans` (DejaVu Sans Bold), `serif` (Noto Serif Bold), `display` (Anton, tall and condensed). Each falls back to ' +
      'Noto Sans SC/KR, Devanagari and Thai for the scripts it lacks.',
  },
);

export const GradientDirectionOption = Type.Union([Type.Literal('vertical'), Type.Literal('horizontal'), Type.Literal('diagonal')], {
  description: 'Top to bottom (`vertical`, the default), left to right, or top left to bottom right.',
});

export const Motion = Type.Union(
  MOTIONS.map((motion) => Type.Literal(motion)),
  {
    description:
      'A slow move over the image for the whole video (Ken Burns): `zoom-in`, `zoom-out` (to and from 1.2 times), or `pan` (left to right). ' +
      'A moving picture is encoded whole, once (renderPath `moving`), and at a constant frame rate.',
  },
);

export const BackgroundOption = Type.Union(
  [
    HexColour,
    Type.Object(
      { gradient: Type.Tuple([HexColour, HexColour], { description: 'From the top (or left) to the bottom (or right).' }), direction: Type.Optional(GradientDirectionOption) },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        image: Type.String({ minLength: 1, maxLength: 64, description: 'The id of an image asset (POST /assets): scaled to cover the frame.' }),
        motion: Type.Optional(Motion),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        video: Type.String({
          minLength: 1,
          maxLength: 64,
          description: 'The id of a video asset (POST /assets): scaled to cover the frame, looped (or cut) to length, its sound never used; encoded whole (renderPath `moving`).',
        }),
      },
      { additionalProperties: false },
    ),
  ],
  {
    description:
      'Behind the captions: a colour ("#0F172A", the default), `{"gradient": ["#1E3A8A", "#DB2777"], "direction": "vertical"}`, `{"image": "<asset id>"}` ' +
      'or a clip, `{"video": "<asset id>"}`.',
  },
);
export type BackgroundOption = Static<typeof BackgroundOption>;

export const SceneOption = Type.Union(
  [
    Type.Object(
      {
        background: BackgroundOption,
        start: Type.Number({ minimum: 0, maximum: 3600, description: 'Seconds into the video where the scene starts (at the first frame at or after it).' }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        background: BackgroundOption,
        sentence: Type.Integer({ minimum: 0, maximum: 10_000, description: 'The scene starts as this sentence starts being spoken (0 is the first; as `marks` counts them).' }),
      },
      { additionalProperties: false },
    ),
  ],
  { description: 'A background from a time or a sentence on, until the next scene.' },
);
export type SceneOption = Static<typeof SceneOption>;

export const SceneList = Type.Array(SceneOption, {
  minItems: 1,
  maxItems: MAX_SCENES,
  description:
    'Backgrounds in turn, in the order shown: `{"background": …, "start": 12.5}` or `{"background": …, "sentence": 3}`. `background` is shown ' +
    'before the first scene, if it starts later than 0. Still scenes keep the fast spliced path (each picture encoded once); a scene that ' +
    'starts after the narration ends is left out.',
});

export const TransitionOption = Type.Union(
  TRANSITIONS.map((transition) => Type.Literal(transition)),
  {
    default: 'cut',
    description: `How one scene gives way to the next: \`cut\`, or \`crossfade\` (the next fades in over ${CROSSFADE_SECONDS} s; the picture then changes in those frames, so it is encoded whole: renderPath \`moving\`).`,
  },
);

export const CaptionCase = Type.Union(
  CAPTION_CASES.map((textCase) => Type.Literal(textCase)),
  { default: 'as-written', description: '`upper`: captions drawn in capitals (the WebVTT file keeps the text as written).' },
);

export const CaptionOutline = Type.Number({
  minimum: 0,
  maximum: 0.25,
  description: "Width of the captions' outline, times the font size (0 to 0.25); by default the style's own (pop 0.12, karaoke and bold 0.06).",
});

export const Platform = Type.Union(
  PLATFORM_NAMES.map((name) => Type.Literal(name)),
  {
    description:
      'Where the video will be posted: sets its size, aspect ratio, safe area and loudness together (fields given as well win). ' +
      PLATFORM_NAMES.map((name) => `\`${name}\`: ${PLATFORMS[name].resolution} ${PLATFORMS[name].aspectRatio}, ${PLATFORMS[name].loudness} LUFS`).join('; ') +
      '. For tiktok, reels and shorts the captions keep clear of that app\'s own buttons and text.',
  },
);
