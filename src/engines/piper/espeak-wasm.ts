// eSpeak NG's WebAssembly build (@echogarden/espeak-ng-emscripten): the phonemizer's fallback where Debian's
// libespeak-ng is absent (about three times slower: figures in phonemizer.ts).
import createEspeakModule, { type ESpeakNGWorker, type EspeakModule } from '@echogarden/espeak-ng-emscripten';
import { EVENT_PASS_RATE, type EspeakAccess, type EspeakEvent } from './espeak-access.js';

/** How the binding joins its clauses; it also puts `_` between a word's phonemes. */
const CLAUSE_SEPARATOR = ' | ';

export class WasmEspeak implements EspeakAccess {
  readonly build = 'webassembly';

  private constructor(
    private readonly espeak: EspeakModule,
    private readonly worker: ESpeakNGWorker,
  ) {}

  static async create(): Promise<WasmEspeak> {
    const espeak = await createEspeakModule();
    const worker = new espeak.eSpeakNGWorker();
    worker.set_rate(EVENT_PASS_RATE);
    return new WasmEspeak(espeak, worker);
  }

  setVoice(voice: string): boolean {
    return this.worker.set_voice(voice) === 0;
  }

  synthesizeEvents(ssml: string, onEvent: (event: EspeakEvent) => void): void {
    this.worker.synthesize(ssml, (_samples, events) => {
      for (const event of events) {
        onEvent({ type: event.type, textPosition: event.text_position, ...(typeof event.id === 'string' ? { phoneme: event.id } : {}) });
      }
      return false;
    });
  }

  textToPhonemes(text: string, tie?: string): string[] {
    if (tie !== undefined) throw new Error("eSpeak NG's WebAssembly build gives no tied phonemes");
    const pointer = this.espeak.getPointer(this.worker.text_to_phonemes(text, 1));
    const heap = this.espeak.HEAPU8;
    const end = heap.indexOf(0, pointer);
    const joined = Buffer.from(heap.subarray(pointer, end === -1 ? heap.length : end)).toString('utf8');
    // The binding returns a copy it never frees.
    this.espeak._free(pointer);
    return joined.split(CLAUSE_SEPARATOR).map((clause) => clause.replaceAll('_', ''));
  }
}
