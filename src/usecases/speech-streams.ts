// Streamed speech, the one use case behind every front door that answers with audio as it is spoken: OpenAI's and
// ElevenLabs' speech routes, Wyoming, voice previews. A request is resolved once (its voice for its text, the
// client's lexicons, the client's partition of the sentence cache), then spoken in a job slot of this process.
import type { Writable } from 'node:stream';
import type { Voice } from '../engines/voice.js';
import type { JobClient, JobSlots } from '../jobs/admission/slots.js';
import { AUDIO_ENCODINGS, type AudioEncoding } from '../speech/audio-encoding.js';
import type { LexiconStore } from '../speech/lexicon-store.js';
import { writtenText, type TextType } from '../speech/read-script.js';
import { assertDialogue, dialogueSsml, type DialogueSegment } from '../speech/dialogue.js';
import { splitSentences } from '../speech/sentences.js';
import type { StreamRequest, Synthesizer } from '../speech/synthesizer.js';

/** What a front door asks to have spoken, in voxreel's words (its own names mapped already). */
export type SpeechStreamRequest = SpokenText & StreamOptions;

/** What is said: a text in a voice, or a dialogue (each turn in its own voice, the first turn's the request's). */
type SpokenText =
  | { text: string; textType?: TextType; voice: string }
  /** Each turn's voice an id already (the front door's to map and refuse, naming its field); `field`: the turns' own, for a refusal of them all. */
  | { segments: readonly DialogueSegment[]; field: string; maxCharacters: number };

interface StreamOptions {
  /** Ids of the client's lexicons (POST /lexicons), applied in order. */
  lexicons?: readonly string[];
  encoding: AudioEncoding;
  /** Playback speed, 0.25 to 4. */
  speed: number;
  /** Resample to this rate; by default the voice's own. */
  sampleRate?: number;
  /** Told the words of each sentence as its audio goes to the encoder (character timings). */
  onWords?: StreamRequest['onWords'];
}

/**
 * A request checked and resolved before its first byte: a refusal (an unknown voice, a lexicon not the client's)
 * comes before any audio. What it resolved stays with the use case (`resolved` below): a front door reads these
 * facts and hands it back to `stream`, and cannot speak through the voice's engine around the job slots.
 */
export interface PreparedSpeech {
  readonly voice: Pick<Voice, 'id' | 'sampleRate'>;
  readonly encoding: AudioEncoding;
  /** The MIME type of the encoded audio. */
  readonly contentType: string;
  /** What the client is charged for (quotas, limits). */
  readonly characters: number;
}

/** The resolved request of each prepared one, for `stream` alone. */
const resolved = new WeakMap<PreparedSpeech, Omit<StreamRequest, 'signal'>>();

export interface SpeechStreamDeps {
  synthesizer: Pick<Synthesizer, 'resolveVoice' | 'voiceOf' | 'streamAudio'>;
  lexicons: Pick<LexiconStore, 'resolve'>;
  slots: Pick<JobSlots, 'run'>;
  /** The sentence cache's partition of a client (CACHE_SCOPE). */
  partition: (client: string) => string | undefined;
}

export class SpeechStreams {
  constructor(private readonly deps: SpeechStreamDeps) {}

  /** The voice of this id, or UNKNOWN_VOICE (ENGINE_UNAVAILABLE for an engine that did not start) naming `field`. */
  checkVoice(id: string, field?: string): Voice {
    return this.deps.synthesizer.voiceOf(id, field);
  }

  /** Resolves a request once, for `client` (its lexicons and cache partition); undefined: speech shared by every client (previews). */
  async prepare(client: string | undefined, request: SpeechStreamRequest): Promise<PreparedSpeech> {
    const { encoding, speed, sampleRate, onWords } = request;
    const { text, textType, voice: voiceId } = this.spokenText(request);
    const voice = this.deps.synthesizer.resolveVoice({ text, voice: voiceId, textType });
    const lexicons = client === undefined ? undefined : await this.deps.lexicons.resolve(request.lexicons, client);
    const cachePartition = client === undefined ? undefined : this.deps.partition(client);
    const characters = writtenText(text, textType).length;
    const prepared: PreparedSpeech = { voice: { id: voice.id, sampleRate: voice.sampleRate }, encoding, contentType: AUDIO_ENCODINGS[encoding].contentType, characters };
    resolved.set(prepared, { text, textType, voice, encoding, speed, sampleRate, onWords, lexicons, cachePartition });
    return prepared;
  }

  /** A request's text in a voice: a dialogue's turns as SSML (dialogue.ts) in the first turn's voice, within its bounds (assertDialogue). */
  private spokenText(request: SpokenText): { text: string; textType?: TextType; voice: string } {
    if ('text' in request) return request;
    const { segments, field, maxCharacters } = request;
    assertDialogue(segments, { maxCharacters, field });
    return { text: dialogueSsml(segments), textType: 'ssml', voice: (segments[0] as DialogueSegment).voice };
  }

  /** Speaks a prepared request into `output` in a job slot (limits, quotas, metrics), stopping at the client's signal or the job's deadline. */
  stream(client: JobClient, prepared: PreparedSpeech, output: Writable, operation: 'speech' | 'tts' = 'speech'): Promise<void> {
    const request = resolved.get(prepared);
    if (!request) return Promise.reject(new Error('stream() takes what prepare() made'));
    return this.deps.slots.run(operation, client, (signal) => this.deps.synthesizer.streamAudio({ ...request, signal }, output));
  }
}

/** Text that arrives in pieces (Wyoming's streaming): its whole sentences, ready to speak, and the rest, which may go on. */
export function finishedSentences(text: string): { ready: string; rest: string } {
  const spans = splitSentences(text);
  const last = spans.at(-1);
  if (spans.length < 2 || !last) return { ready: '', rest: text };
  return { ready: text.slice(0, last.offset), rest: text.slice(last.offset) };
}
