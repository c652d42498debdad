// A dialogue's speakers as its captions show them: each in a colour of its own (the request's `speakers` map, keyed
// by voice id or name, else a palette), so that who speaks shows without a name on screen.
import type { SpeakerTurn } from '../speech/dialogue.js';
import type { CaptionLook } from './caption-style.js';

/** What a request may set of one speaker's captions (RGB hex without `#`). */
export interface SpeakerLook {
  textColour?: string;
  highlightColour?: string;
}

/** A speaker as the captions draw it. */
export interface CaptionSpeaker {
  /** Who speaks (dialogue.ts speakerTurns): WebVTT's <v> span. */
  name: string;
  voice: string;
  textColour: string;
  highlightColour: string;
}

/**
 * The caption text of speakers the request gives no colour, in the order they first speak: the first keeps the
 * captions' own; the others light, clear colours that read on dark backgrounds under an outline and stay apart from
 * the default highlight (#FFD23F).
 */
const PALETTE = ['7FDBFF', 'FF9EC4', '9BE58E', 'C9A7FF', 'FF8A80', '80FFE8', 'B0BEC5', '8AB4FF', 'F5D0A9'] as const;

/** The speakers of `turns` in the order they first speak, each with its look: asked for (by voice id or the name captions give it), else the palette's. */
export function captionSpeakers(turns: readonly SpeakerTurn[], look: Pick<CaptionLook, 'textColour' | 'highlightColour'>, asked: Readonly<Record<string, SpeakerLook>> = {}): CaptionSpeaker[] {
  const byKey = new Map(Object.entries(asked).map(([key, value]) => [key.toLowerCase(), value]));
  const speakers: CaptionSpeaker[] = [];
  for (const turn of turns) {
    if (speakers.some((speaker) => speaker.voice === turn.voice)) continue;
    const own = byKey.get(turn.voice.toLowerCase()) ?? byKey.get(turn.name.toLowerCase());
    const index = speakers.length;
    const fallback = index === 0 ? look.textColour : (PALETTE[(index - 1) % PALETTE.length] as string);
    speakers.push({ name: turn.name, voice: turn.voice, textColour: own?.textColour ?? fallback, highlightColour: own?.highlightColour ?? look.highlightColour });
  }
  return speakers;
}
