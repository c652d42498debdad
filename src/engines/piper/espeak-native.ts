// The system's eSpeak NG library (Debian: libespeak-ng1 1.52 from bookworm-backports, its data in espeak-ng-data)
// through koffi: Piper's phonemes in about a third of the WebAssembly build's time (figures in phonemizer.ts). Declarations from
// espeak-ng's src/include/espeak-ng/speak_lib.h (API revision 12). eSpeak NG keeps one state per process (voice,
// rate, callback): one NativeEspeak per library, made once. Only the Piper host imports this module: a fault in
// the library takes down that child, never the server.
import koffi from 'koffi';
import { EVENT_PASS_RATE, type EspeakAccess, type EspeakEvent } from './espeak-access.js';

/** Debian's soname (package libespeak-ng1). */
export const ESPEAK_NG_LIBRARY = 'libespeak-ng.so.1';

const AUDIO_OUTPUT_SYNCHRONOUS = 2;
const espeakINITIALIZE_PHONEME_EVENTS = 0x0001;
const espeakINITIALIZE_PHONEME_IPA = 0x0002;
/** Without it a missing espeak-ng-data ends the process instead of failing the call. */
const espeakINITIALIZE_DONT_EXIT = 0x8000;
const POS_CHARACTER = 1;
const espeakCHARS_AUTO = 0;
const espeakCHARS_UTF8 = 1;
const espeakSSML = 0x10;
const espeakPHONEMES = 0x100;
const espeakRATE = 1;
/**
 * The event pass's rate here: from 450 words a minute on, this build speeds its audio up through libsonic, which
 * costs eight times more (14 ms a sentence against 1.7); 449 gives the same events (see EVENT_PASS_RATE).
 */
const EVENT_RATE = EVENT_PASS_RATE - 1;
const espeakPHONEMES_IPA = 0x02;
/** speak_lib.h: bit 7 asks for a tie between the letters of one phoneme, the tie itself in bits 8-23. */
const espeakPHONEMES_TIE = 0x80;
const EE_OK = 0;

const EVENT_TYPES: readonly EspeakEvent['type'][] = ['list_terminated', 'word', 'sentence', 'mark', 'play', 'end', 'msg_terminated', 'phoneme', 'samplerate'];

const EspeakEventStruct = koffi.struct('espeak_EVENT', {
  type: 'int',
  unique_identifier: 'unsigned int',
  text_position: 'int',
  length: 'int',
  audio_position: 'int',
  sample: 'int',
  user_data: 'void *',
  // A union of int number, const char *name and char string[8]: only the phoneme's string is read.
  id: koffi.array('uint8_t', 8),
});
const EVENT_SIZE = koffi.sizeof(EspeakEventStruct);
const TYPE_OFFSET = koffi.offsetof(EspeakEventStruct, 'type');
const POSITION_OFFSET = koffi.offsetof(EspeakEventStruct, 'text_position');
const LENGTH_OFFSET = koffi.offsetof(EspeakEventStruct, 'length');
const ID_OFFSET = koffi.offsetof(EspeakEventStruct, 'id');
const ID_SIZE = 8;

// The events come as a pointer (a BigInt): koffi cannot tell how many there are (the list ends with type 0).
const SynthCallback = koffi.proto('int t_espeak_callback(int16_t *wav, int numsamples, void *events)');

interface Binding {
  initialize(output: number, bufferMs: number, path: string | null, options: number): number;
  setSynthCallback(callback: unknown): void;
  setVoiceByName(name: string): number;
  setParameter(parameter: number, value: number, relative: number): number;
  synth(text: string, size: number, position: number, positionType: number, endPosition: number, flags: number, id: null, userData: null): number;
  textToPhonemes(cursor: [bigint | null], textMode: number, phonemeMode: number): string | null;
}

/**
 * 1.52 or later, told by a call it added (espeak_TextToPhonemesWithTerminator, from Piper's fork): 1.51 (Debian
 * bookworm's own) spells the phoneme o@ ("four", "or") oː where the Piper voices were trained on 1.52's ɔː, and
 * stresses "one" in a list; with it 42 of the 58 texts of fixtures/piper-tts-phonemes.json come out as piper-tts
 * 1.8 spells them, with 1.52 50, as many as the WebAssembly build (1.52 too), which then serves instead.
 */
function assertRecentEnough(library: ReturnType<typeof koffi.load>, path: string): void {
  try {
    library.func('const char *espeak_TextToPhonemesWithTerminator(void **textptr, int textmode, int phonememode, int *terminator)');
  } catch {
    throw new Error(`${path} is older than eSpeak NG 1.52, whose phonemes the Piper voices were trained on (Debian bookworm: apt-get install -t bookworm-backports libespeak-ng1 espeak-ng-data)`);
  }
}

function bind(path: string): Binding {
  const library = koffi.load(path);
  assertRecentEnough(library, path);
  return {
    initialize: library.func('int espeak_Initialize(int output, int buflength, const char *path, int options)'),
    setSynthCallback: library.func('void espeak_SetSynthCallback(t_espeak_callback *callback)'),
    setVoiceByName: library.func('int espeak_SetVoiceByName(const char *name)'),
    setParameter: library.func('int espeak_SetParameter(int parameter, int value, int relative)'),
    synth: library.func(
      'int espeak_Synth(const char *text, size_t size, unsigned int position, int position_type, unsigned int end_position, unsigned int flags, unsigned int *unique_identifier, void *user_data)',
    ),
    // The cursor moves to the next clause, NULL after the last; the result is eSpeak's buffer, copied by koffi.
    textToPhonemes: library.func('const char *espeak_TextToPhonemes(_Inout_ void **textptr, int textmode, int phonememode)'),
  } as Binding;
}

const loaded = new Map<string, NativeEspeak>();

export class NativeEspeak implements EspeakAccess {
  readonly build = 'native';
  private onEvent: ((event: EspeakEvent) => void) | undefined;
  /**
   * A word event of no length, held until a phoneme shows it is a word: after a text that ended in a closing
   * quote, Debian's builds (1.51 seen) add one such event that says nothing (at a stray position) to the next
   * synthesis; a real word can come with no length too (after «), and has phonemes. The WebAssembly build gives neither.
   */
  private emptyWord: EspeakEvent | undefined;

  private constructor(private readonly binding: Binding) {
    // Registered for as long as the process lives: eSpeak keeps the pointer, and only one instance is made.
    const callback = koffi.register((_wav: unknown, _count: number, events: bigint | null) => this.read(events), koffi.pointer(SynthCallback));
    // The data path is the library's own (Debian: /usr/lib/x86_64-linux-gnu/espeak-ng-data, of the same version).
    const options = espeakINITIALIZE_PHONEME_EVENTS | espeakINITIALIZE_PHONEME_IPA | espeakINITIALIZE_DONT_EXIT;
    if (binding.initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, null, options) <= 0) {
      koffi.unregister(callback);
      throw new Error('eSpeak NG could not start (is espeak-ng-data installed?)');
    }
    binding.setSynthCallback(callback);
    binding.setParameter(espeakRATE, EVENT_RATE, 0);
  }

  /** The library at `path` (a soname or a file), loaded and started once per process; throws when it cannot be. */
  static load(path: string = ESPEAK_NG_LIBRARY): NativeEspeak {
    let espeak = loaded.get(path);
    if (!espeak) {
      espeak = new NativeEspeak(bind(path));
      loaded.set(path, espeak);
    }
    return espeak;
  }

  setVoice(voice: string): boolean {
    return this.binding.setVoiceByName(voice) === EE_OK;
  }

  synthesizeEvents(ssml: string, onEvent: (event: EspeakEvent) => void): void {
    this.onEvent = onEvent;
    this.emptyWord = undefined;
    try {
      const flags = espeakCHARS_UTF8 | espeakSSML | espeakPHONEMES;
      const status = this.binding.synth(ssml, Buffer.byteLength(ssml) + 1, 0, POS_CHARACTER, 0, flags, null, null);
      if (status !== EE_OK) throw new Error(`eSpeak NG could not synthesize (error ${status})`);
    } finally {
      this.onEvent = undefined;
    }
  }

  textToPhonemes(text: string, tie?: string): string[] {
    const mode = tie === undefined ? espeakPHONEMES_IPA : espeakPHONEMES_IPA | espeakPHONEMES_TIE | ((tie.codePointAt(0) ?? 0) << 8);
    const bytes = Buffer.from(`${text}\0`, 'utf8');
    // eSpeak reads the text after this call returns, clause by clause: memory that does not move.
    const copy = koffi.alloc('uint8_t', bytes.length) as bigint;
    try {
      koffi.encode(copy, koffi.array('uint8_t', bytes.length), bytes);
      const cursor: [bigint | null] = [copy];
      const clauses: string[] = [];
      while (cursor[0]) clauses.push(this.binding.textToPhonemes(cursor, espeakCHARS_AUTO, mode) ?? '');
      return clauses;
    } finally {
      koffi.free(copy);
    }
  }

  /** The synth callback: hands on each event of the list (it ends with type 0); 0 lets the synthesis go on. */
  private read(events: bigint | null): number {
    const onEvent = this.onEvent;
    if (!events || !onEvent) return 0;
    for (let at = events; ; at += BigInt(EVENT_SIZE)) {
      // One event's bytes, read in place (koffi.decode per field costs ten times more).
      const event = Buffer.from(koffi.view(at, EVENT_SIZE));
      const type = EVENT_TYPES[event.readInt32LE(TYPE_OFFSET)] ?? 'list_terminated';
      if (type === 'list_terminated') return 0;
      const textPosition = event.readInt32LE(POSITION_OFFSET);
      if (type === 'word' && event.readInt32LE(LENGTH_OFFSET) === 0) {
        this.emptyWord = { type, textPosition };
      } else if (type === 'phoneme') {
        const phoneme = phonemeName(event.subarray(ID_OFFSET, ID_OFFSET + ID_SIZE));
        if (this.emptyWord && phoneme) onEvent(this.emptyWord);
        if (phoneme) this.emptyWord = undefined;
        onEvent({ type, textPosition, phoneme });
      } else {
        if (type === 'word' || type === 'end') this.emptyWord = undefined;
        onEvent({ type, textPosition });
      }
    }
  }
}

/** id.string: UTF-8, ended by a zero byte unless it takes all 8. */
function phonemeName(id: Buffer): string {
  const end = id.indexOf(0);
  return id.toString('utf8', 0, end === -1 ? ID_SIZE : end);
}
