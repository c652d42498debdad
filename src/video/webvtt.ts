import { webVttFile } from '../speech/captions/cues.js';
import type { Captions } from './captions.js';

/**
 * The burned-in captions as WebVTT, frame-exact: same cues, same lines, and a timestamp tag where each
 * later word lights up (players that know karaoke-style cues highlight along; others show the plain cue).
 */
export function webVtt(captions: Captions): string {
  const seconds = (frame: number) => frame / captions.fps;
  return webVttFile(
    captions.cues
      .filter((cue) => cue.endFrame > cue.startFrame)
      .map((cue) => ({
        start: seconds(cue.startFrame),
        end: seconds(cue.endFrame),
        ...(cue.speaker === undefined ? {} : { voice: captions.speakers?.[cue.speaker]?.name }),
        lines: cue.lines.map((line) => line.map((piece) => ({ text: piece.text, start: seconds(captions.wordFrames[piece.word] as number), spaceBefore: piece.spaceBefore }))),
      })),
  );
}
