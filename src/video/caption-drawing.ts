// The captions handed to the splicer (h264/) as it takes them: their timeline's changes, and their rows and ASS
// script measured and written here, so that the splicer draws nothing itself.
import { assScript } from './ass.js';
import { drawnRows, type DrawnCaptions } from './caption-geometry.js';
import { titlesOf, type Captions } from './captions.js';
import { captionFont } from './font.js';
import { bandAround, type CaptionBand, type CaptionDrawing } from './h264/index.js';
import { keyFrames } from './layout.js';

/** The rows the captions' script draws on (caption-geometry.ts drawnRows: ink, marks, outline, blur, shadow, boxes, the title while it shows) as the splicer's band. */
export function captionBand(captions: DrawnCaptions): CaptionBand {
  const { box } = captions;
  const font = captionFont(captions.look.family, captions.language);
  const textBottom = box.height - box.marginBottom;
  // Nothing drawn: a line's height over the bottom margin, as before there was text to measure.
  return bandAround(drawnRows(captions, font) ?? { top: textBottom - box.fontSize, bottom: textBottom }, box.height);
}

/** Laid-out captions as the splicer's drawing; each band and script is made once, when the splicer asks for it. */
export function captionDrawing(captions: Captions): CaptionDrawing {
  const drawn = new Map<boolean, { area: CaptionBand; script: string }>();
  return {
    frames: captions.frames,
    titleSpans: titlesOf(captions).map(({ startFrame, endFrame }) => ({ startFrame, endFrame })),
    changes: keyFrames(captions),
    draw: (titled) => {
      const found = drawn.get(titled);
      if (found) return found;
      const shown = titled ? captions : { ...captions, title: undefined, cards: undefined };
      const area = captionBand(shown);
      const made = { area, script: assScript(shown, area) };
      drawn.set(titled, made);
      return made;
    },
  };
}

/** The changes of a timeline without captions (a video with subtitles off): its first and last frames. */
export function blankTimeline(frames: number): Pick<CaptionDrawing, 'frames' | 'changes'> {
  return { frames, changes: keyFrames({ frames, states: [] }) };
}
