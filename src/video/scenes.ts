import { AppError } from '../errors.js';
import type { SentenceTiming } from '../speech/speech.js';
import { isMoving, type Background } from './background.js';

/** How one scene gives way to the next: at once, or faded over CROSSFADE_SECONDS. */
export const TRANSITIONS = ['cut', 'crossfade'] as const;
export type Transition = (typeof TRANSITIONS)[number];

/** A crossfade's length: the next scene fades in from its start over this long. */
export const CROSSFADE_SECONDS = 0.3;

/** At most this many scenes in one video. */
export const MAX_SCENES = 20;

/** A scene as asked for: a background from a time (seconds into the video) or from when a sentence starts being spoken. */
export type SceneRequest = { background: Background } & SceneStart;

/** Where a scene starts: seconds into the video, or a sentence's index. */
export type SceneStart = { start: number } | { sentence: number };

/** A scene laid on the video's frames: its background from `startFrame` to the next scene's (or the end). */
export interface Scene {
  background: Background;
  startFrame: number;
}

/**
 * The scenes' first frames: the first frame at or after their start (as words light up), a `sentence` scene at its
 * sentence's first spoken word (0 is the first sentence, counted as `marks` counts them), a scene at sentence 0 at frame 0. A scene that starts at or
 * after the last frame is never seen and is left out. Throws INVALID_SCENES (422) for a sentence past the last one
 * and for starts that do not rise.
 */
export function placeScenes(requests: readonly SceneRequest[], sentences: readonly SentenceTiming[], fps: number, totalFrames: number): Scene[] {
  const placed = requests.map((scene, index) => {
    let seconds: number;
    if ('sentence' in scene) {
      const sentence = sentences[scene.sentence];
      if (!sentence) {
        throw new AppError('INVALID_SCENES', {
          field: `scenes[${index}].sentence`,
          message: `Scene ${index} starts at sentence ${scene.sentence}, but the narration has ${sentences.length} sentences (counted from 0).`,
        });
      }
      // The first sentence's scene is the video's first picture (the cover most platforms show), whatever silence
      // the voice starts with.
      seconds = scene.sentence === 0 ? 0 : sentence.start;
    } else {
      seconds = scene.start;
    }
    return { background: scene.background, startFrame: Math.max(0, Math.ceil(seconds * fps - 1e-6)) };
  });
  placed.forEach((scene, index) => {
    if (index > 0 && scene.startFrame <= (placed[index - 1] as Scene).startFrame) throw outOfOrder(index);
  });
  return placed.filter((scene) => scene.startFrame < totalFrames);
}

/** Time-based starts that already fall in the wrong order, found before any work (sentence scenes are placed after speech). */
export function checkSceneOrder(requests: readonly SceneStart[]): void {
  let latest = -Infinity;
  requests.forEach((scene, index) => {
    if (!('start' in scene)) return;
    if (scene.start <= latest) throw outOfOrder(index);
    latest = scene.start;
  });
}

function outOfOrder(index: number): AppError {
  return new AppError('INVALID_SCENES', {
    field: `scenes[${index}]`,
    message: `Scene ${index} does not start after the scene before it (at least one frame later): list the scenes in the order they are shown.`,
  });
}

/** The backgrounds shown in turn from frame 0: the video's own `background` until the first scene (when it starts later). */
export function sceneTimeline(background: Background, scenes: readonly Scene[]): Scene[] {
  return scenes[0]?.startFrame === 0 ? [...scenes] : [{ background, startFrame: 0 }, ...scenes];
}

/** Frames each cross-fade takes into scene `index + 1`: CROSSFADE_SECONDS, or less where that scene is shorter. */
export function crossfadeFrames(timeline: readonly Scene[], totalFrames: number, fps: number): number[] {
  const fade = Math.max(1, Math.round(CROSSFADE_SECONDS * fps));
  return timeline.slice(1).map((scene, index) => Math.min(fade, (timeline[index + 2]?.startFrame ?? totalFrames) - scene.startFrame));
}

/** Whether these scenes make a picture that changes in every frame (a move, or cross-fades between scenes). */
export function scenesMove(timeline: readonly Scene[], transition: Transition): boolean {
  return timeline.some((scene) => isMoving(scene.background)) || (transition === 'crossfade' && timeline.length > 1);
}
