// RHVoice's C API (RHVoice.h, librhvoice5) through koffi. Only an engine host imports this module:
// a fault in the library takes down that child, never the server.
import koffi from 'koffi';

const LIBRARY = 'libRHVoice.so.5';
/** Debian's locations (rhvoice, rhvoice-english). */
const DATA_PATH = '/usr/share/RHVoice';
const CONFIG_PATH = '/etc/RHVoice';

const SetSampleRate = koffi.proto('int rhvoice_set_sample_rate(int sample_rate, void *user_data)');
const PlaySpeech = koffi.proto('int rhvoice_play_speech(const int16_t *samples, unsigned int count, void *user_data)');
const ProcessMark = koffi.proto('int rhvoice_process_mark(const char *name, void *user_data)');
const TextEvent = koffi.proto('int rhvoice_text_event(unsigned int position, unsigned int length, void *user_data)');
const PlayAudio = koffi.proto('int rhvoice_play_audio(const char *src, void *user_data)');
const Done = koffi.proto('void rhvoice_done(void *user_data)');

const Callbacks = koffi.struct('RHVoice_callbacks', {
  set_sample_rate: koffi.pointer(SetSampleRate),
  play_speech: koffi.pointer(PlaySpeech),
  process_mark: koffi.pointer(ProcessMark),
  word_starts: koffi.pointer(TextEvent),
  word_ends: koffi.pointer(TextEvent),
  sentence_starts: koffi.pointer(TextEvent),
  sentence_ends: koffi.pointer(TextEvent),
  play_audio: koffi.pointer(PlayAudio),
  done: koffi.pointer(Done),
});

const InitParams = koffi.struct('RHVoice_init_params', {
  data_path: 'const char *',
  config_path: 'const char *',
  resource_paths: 'void *',
  callbacks: Callbacks,
  options: 'unsigned int',
});

const VoiceInfo = koffi.struct('RHVoice_voice_info', {
  language: 'const char *',
  name: 'const char *',
  gender: 'int',
  country: 'const char *',
});

const SynthParams = koffi.struct('RHVoice_synth_params', {
  voice_profile: 'const char *',
  absolute_rate: 'double',
  absolute_pitch: 'double',
  absolute_volume: 'double',
  relative_rate: 'double',
  relative_pitch: 'double',
  relative_volume: 'double',
  punctuation_mode: 'int',
  punctuation_list: 'const char *',
  capitals_mode: 'int',
  flags: 'int',
});

const RHVOICE_MESSAGE_TEXT = 0;

const library = koffi.load(LIBRARY);
const newTtsEngine = library.func('RHVoice_new_tts_engine', 'void *', [koffi.pointer(InitParams)]);
const getNumberOfVoices = library.func('unsigned int RHVoice_get_number_of_voices(void *engine)');
const getVoices = library.func('const RHVoice_voice_info *RHVoice_get_voices(void *engine)');
const newMessage = library.func('RHVoice_new_message', 'void *', [
  'void *',
  'const char *',
  'unsigned int',
  'int',
  koffi.pointer(SynthParams),
  'void *',
]);
const speak = library.func('int RHVoice_speak(void *message)');
const deleteMessage = library.func('void RHVoice_delete_message(void *message)');

export interface TextSpan {
  /** UTF-8 byte offset and length in the message text. */
  position: number;
  length: number;
}

/** What synthesis reports as it goes; each method returns false to stop it. */
export interface SpeechListener {
  sampleRate(rate: number): boolean;
  samples(samples: Int16Array): boolean;
  wordStarts(word: TextSpan): boolean;
  wordEnds(word: TextSpan): boolean;
}

/** Speaks one message at a time (the callbacks are the engine's, not the message's). */
export class RhvoiceLibrary {
  private listener: SpeechListener | undefined;
  private readonly engine: unknown;

  constructor() {
    const callbacks = {
      set_sample_rate: koffi.register((rate: number) => this.call((listener) => listener.sampleRate(rate)), koffi.pointer(SetSampleRate)),
      play_speech: koffi.register(
        (pointer: unknown, count: number) =>
          // A copy: the buffer is RHVoice's and is reused once this returns.
          this.call((listener) => listener.samples(new Int16Array(koffi.view(pointer, count * 2).slice(0)))),
        koffi.pointer(PlaySpeech),
      ),
      process_mark: null,
      word_starts: koffi.register(
        (position: number, length: number) => this.call((listener) => listener.wordStarts({ position, length })),
        koffi.pointer(TextEvent),
      ),
      word_ends: koffi.register(
        (position: number, length: number) => this.call((listener) => listener.wordEnds({ position, length })),
        koffi.pointer(TextEvent),
      ),
      sentence_starts: null,
      sentence_ends: null,
      play_audio: null,
      done: null,
    };
    this.engine = newTtsEngine({ data_path: DATA_PATH, config_path: CONFIG_PATH, resource_paths: null, callbacks, options: 0 });
    if (!this.engine) throw new Error(`RHVoice could not start with its data in ${DATA_PATH}`);
  }

  /** Names of the installed voices, as RHVoice spells them (`Clb`). */
  voiceNames(): string[] {
    const count = getNumberOfVoices(this.engine) as number;
    if (count === 0) return [];
    const voices = koffi.decode(getVoices(this.engine), VoiceInfo, count) as { name: string }[];
    return voices.map((voice) => voice.name);
  }

  /** Synthesizes plain text with one voice profile; false when RHVoice failed or a listener stopped it. */
  speak(voice: string, text: string, listener: SpeechListener): boolean {
    const params = {
      voice_profile: voice,
      absolute_rate: 0,
      absolute_pitch: 0,
      absolute_volume: 0,
      relative_rate: 1,
      relative_pitch: 1,
      relative_volume: 1,
      punctuation_mode: 0,
      punctuation_list: null,
      capitals_mode: 0,
      flags: 0,
    };
    const message = newMessage(this.engine, text, Buffer.byteLength(text, 'utf8'), RHVOICE_MESSAGE_TEXT, params, null);
    if (!message) return false;
    this.listener = listener;
    try {
      return speak(message) !== 0;
    } finally {
      this.listener = undefined;
      deleteMessage(message);
    }
  }

  private call(action: (listener: SpeechListener) => boolean): number {
    return this.listener && action(this.listener) ? 1 : 0;
  }
}
