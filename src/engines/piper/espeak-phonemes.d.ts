// The parts of @echogarden/espeak-ng-emscripten (untyped) that espeak-wasm.ts uses besides those
// espeak-ng-emscripten.d.ts declares for the eSpeak NG engine.
import '@echogarden/espeak-ng-emscripten';

declare module '@echogarden/espeak-ng-emscripten' {
  interface ESpeakNGWorker {
    /**
     * espeak_TextToPhonemes over the whole text (read as plain text, not SSML): a pointer to a copy the caller must
     * free, the clauses joined by ` | `, the phonemes of a word by `_`.
     */
    text_to_phonemes(text: string, useIpa: number): object;
    /** Words per minute, 80 to 450 (espeakRATE); kept across set_voice(). */
    set_rate(rate: number): void;
  }

  interface EspeakModule {
    HEAPU8: Uint8Array;
    getPointer(wrapped: object): number;
    _free(pointer: number): void;
  }
}
