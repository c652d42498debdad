import { escapeVttText, vttTime } from '../captions.js';
import type { Captions } from './layout.js';

export { escapeVttText, vttTime };

/**
 * The burned-in captions as WebVTT, frame-exact: same cues, same lines, and a timestamp tag where each
 * later word lights up (players that know karaoke-style cues highlight along; others show the plain cue).
 */
export function webVtt(captions: Captions): string {
  const time = (frame: number) => vttTime(frame / captions.fps);
  const blocks = captions.cues.flatMap((cue) => {
    if (cue.endFrame <= cue.startFrame) return [];
    let lastTag = cue.startFrame;
    const lines = cue.lines.map((line) =>
      line
        .map((piece) => {
          const frame = captions.wordFrames[piece.word] as number;
          // Timestamps must rise strictly inside the cue; pieces of one word share theirs.
          const tag = frame > lastTag && frame < cue.endFrame ? `<${time(frame)}>` : '';
          lastTag = Math.max(lastTag, frame);
          return tag + escapeVttText(piece.text);
        })
        .join(' '),
    );
    return [`${time(cue.startFrame)} --> ${time(cue.endFrame)}\n${lines.join('\n')}`];
  });
  return ['WEBVTT', ...blocks, ''].join('\n\n');
}
