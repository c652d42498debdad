// The parts of @echogarden/espeak-ng-emscripten (untyped) that espeak-host.ts uses.
declare module '@echogarden/espeak-ng-emscripten' {
  export interface EspeakRawEvent {
    type: 'list_terminated' | 'word' | 'sentence' | 'mark' | 'play' | 'end' | 'msg_terminated' | 'phoneme' | 'samplerate';
    /** 1-based, in code points of the input, markup included. */
    text_position: number;
    word_length: number;
    /** Milliseconds from the start of the synthesis. */
    audio_position: number;
    /** Phoneme (IPA) for phoneme events, word or sentence number for those. */
    id?: string | number;
  }

  export interface EspeakRawVoice {
    name: string;
    identifier: string;
    languages: { priority: number; name: string }[];
  }

  export interface ESpeakNGWorker {
    readonly samplerate: number;
    /** 0 on success. Accepts `<name or identifier>+<variant>`. */
    set_voice(name: string): number;
    list_voices(): EspeakRawVoice[];
    /** Synchronous; the text is read as SSML. Returning true from the callback stops the synthesis. */
    synthesize(text: string, callback: (samples: Int16Array, events: EspeakRawEvent[]) => boolean): void;
  }

  export interface EspeakModule {
    eSpeakNGWorker: new () => ESpeakNGWorker;
    FS: {
      readdir(path: string): string[];
      readFile(path: string, options: { encoding: 'utf8' }): string;
    };
  }

  export default function createEspeakModule(options?: object): Promise<EspeakModule>;
}
