// The Wyoming protocol (Home Assistant's voice services) on a TCP port of the API process: `describe` → `info` (every
// voice a TTS voice), `synthesize` → `audio-start`, `audio-chunk`s as the sentences are spoken, `audio-stop`, and the
// streaming form (`synthesize-start`, `-chunk`s, `-stop` → `synthesize-stopped`). Speech goes through the service's
// own synthesizer in its job slots (limits, metrics), as /v1/audio/speech does; a bad event gets an `error` event and
// the connection is closed, a failed synthesis an `error` event.
import { createServer, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { MAX_TTS_TEXT } from '../../api/speech.js';
import { matchesLanguage } from '../../engines/language-tags.js';
import { startUpVoice } from '../../engines/recommended.js';
import type { Voice } from '../../engines/voice.js';
import { splitSentences } from '../../speech/sentences.js';
import { version } from '../../version.js';
import { toAppError } from '../plugins/error-handler.js';
import { encodeEvent, EventReader, WyomingProtocolError, type WyomingEvent } from './events.js';
import { announceWyoming, type ZeroconfAnnouncement } from './zeroconf.js';

/** Bytes of audio per `audio-chunk` (wyoming-piper sends 1024 samples of 16-bit mono). */
const CHUNK_BYTES = 2048;
const SAMPLE_BYTES = 2;

export interface WyomingServer {
  port: number;
  /** Its zeroconf announcement, when asked for and made. */
  zeroconf?: ZeroconfAnnouncement;
  close(): Promise<void>;
}

/** Starts serving Wyoming on `port` (0: a free one) of `host`, announced by zeroconf as `zeroconfName` if given. */
export async function startWyoming(app: FastifyInstance, port: number, host: string, zeroconfName?: string): Promise<WyomingServer> {
  const sessions = new Set<Session>();
  const server: Server = createServer((socket) => {
    const session = new Session(app, socket);
    sessions.add(session);
    socket.once('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  app.log.info({ port: bound, host }, 'Wyoming protocol served (Home Assistant: Settings → Devices & services → Wyoming Protocol)');
  // An announcement that fails leaves the server as it is: Home Assistant can still be given its address.
  const announced = zeroconfName
    ? await announceWyoming({ name: zeroconfName, port: bound, host, log: app.log }).catch((error: unknown) => {
        app.log.warn({ err: error }, 'Zeroconf: the Wyoming server could not be announced; add it in Home Assistant by its host and port');
        return undefined;
      })
    : undefined;
  return {
    port: bound,
    zeroconf: announced,
    close: async () => {
      await announced?.close();
      for (const session of sessions) session.end();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What `describe` answers: one TTS program with every voice. */
function info(voices: readonly Voice[]): Record<string, unknown> {
  const attribution = { name: 'voxreel', url: 'https://github.com/voxreel/voxreel' };
  return {
    asr: [],
    handle: [],
    intent: [],
    wake: [],
    mic: [],
    snd: [],
    tts: [
      {
        name: 'voxreel',
        attribution,
        installed: true,
        description: 'voxreel: local text to speech (Piper, RHVoice, Festival, Flite, eSpeak NG)',
        version,
        supports_synthesize_streaming: true,
        voices: voices.map((voice) => ({
          name: voice.id,
          attribution: { name: voice.engine, url: attribution.url },
          installed: true,
          description: voice.name,
          version: null,
          languages: [voice.language],
          speakers: null,
        })),
      },
    ],
  };
}

class Session {
  private readonly reader = new EventReader();
  private readonly controller = new AbortController();
  private readonly log;
  private queue: Promise<void> = Promise.resolve();
  private streaming: { voiceId: string; text: string; started: boolean } | undefined;
  /** A streamed text was just spoken: the plain `synthesize` clients send after it (for servers that do not stream) is not spoken again. */
  private streamed = false;

  constructor(
    private readonly app: FastifyInstance,
    private readonly socket: Socket,
  ) {
    this.log = app.log.child({ wyoming: `${socket.remoteAddress}:${socket.remotePort}` });
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', () => undefined);
    socket.once('close', () => this.controller.abort(new Error('the Wyoming client went away')));
  }

  end(): void {
    this.socket.end();
  }

  private receive(chunk: Buffer): void {
    let events: WyomingEvent[];
    try {
      events = this.reader.push(chunk);
    } catch (error) {
      this.refuse(error instanceof WyomingProtocolError ? error.message : 'malformed event', 'protocol');
      return;
    }
    for (const event of events) this.queue = this.queue.then(() => this.handle(event));
  }

  /** An `error` event, then the connection closed: what is sent after it is not read. */
  private refuse(text: string, code: string): void {
    this.log.warn({ code, text }, 'Wyoming event refused');
    this.send('error', { text, code });
    this.socket.end();
    this.socket.removeAllListeners('data');
  }

  private send(type: string, data?: Record<string, unknown>, payload?: Buffer): boolean {
    if (this.socket.destroyed || this.socket.writableEnded) return false;
    return this.socket.write(encodeEvent(type, data, payload));
  }

  private async handle(event: WyomingEvent): Promise<void> {
    if (this.socket.destroyed) return;
    try {
      switch (event.type) {
        case 'describe':
          this.send('info', info(this.app.engines.listVoices()));
          return;
        case 'ping':
          this.send('pong', event.data);
          return;
        case 'synthesize':
          if (this.streamed) {
            this.streamed = false;
            return;
          }
          await this.speakWhole(textOf(event), this.voiceFor(event.data.voice));
          return;
        case 'synthesize-start':
          // An unknown voice is told now, not at the first sentence.
          this.streaming = { voiceId: this.app.synthesizer.voiceOf(this.voiceFor(event.data.voice)).id, text: '', started: false };
          this.streamed = false;
          return;
        case 'synthesize-chunk':
          await this.streamChunk(textOf(event));
          return;
        case 'synthesize-stop':
          await this.streamStop();
          return;
        default:
          this.refuse(`voxreel speaks text (describe, synthesize, synthesize-start/-chunk/-stop), not "${event.type.slice(0, 50)}"`, 'unsupported-event');
      }
    } catch (error) {
      if (error instanceof WyomingProtocolError) {
        this.refuse(error.message, 'protocol');
        return;
      }
      const failure = toAppError(error);
      this.log.info({ code: failure.code }, 'Wyoming synthesis failed');
      this.send('error', { text: failure.message, code: failure.code });
    }
  }

  /**
   * The voice id asked for: by name (a voxreel voice id, as `info` lists them), the recommended voice of a language,
   * else the recommended English one (the start-up voice's rule); checked by the synthesizer (voiceOf, resolveVoice).
   */
  private voiceFor(asked: unknown): string {
    const wanted = typeof asked === 'object' && asked !== null ? (asked as { name?: unknown; language?: unknown }) : {};
    if (typeof wanted.name === 'string') return wanted.name;
    const voices = this.app.engines.listVoices();
    const language = wanted.language;
    const voice =
      typeof language === 'string'
        ? voices.find((candidate) => candidate.recommended && matchesLanguage(language, candidate.language))
        : startUpVoice(voices, 'auto', (id) => this.app.engines.findVoice(id));
    return voice?.id ?? '';
  }

  private async speakWhole(text: string, voiceId: string): Promise<void> {
    const voice = this.app.synthesizer.resolveVoice({ text, voice: voiceId });
    this.send('audio-start', format(voice));
    await this.speak(text, voice);
    this.send('audio-stop');
  }

  /** The streamed text's whole sentences are spoken as they come; the last, maybe unfinished, waits for more. */
  private async streamChunk(text: string): Promise<void> {
    const stream = this.streaming;
    if (!stream) throw new WyomingProtocolError('synthesize-chunk before synthesize-start');
    stream.text += text;
    if (stream.text.length > MAX_TTS_TEXT) throw new WyomingProtocolError(`the streamed text is longer than ${MAX_TTS_TEXT} characters`);
    const spans = splitSentences(stream.text);
    const last = spans.at(-1);
    if (spans.length < 2 || !last) return;
    const ready = stream.text.slice(0, last.offset);
    stream.text = stream.text.slice(last.offset);
    await this.streamSpeak(stream, ready);
  }

  private async streamStop(): Promise<void> {
    const stream = this.streaming;
    if (!stream) throw new WyomingProtocolError('synthesize-stop before synthesize-start');
    this.streaming = undefined;
    if (stream.text.trim()) await this.streamSpeak(stream, stream.text);
    if (stream.started) this.send('audio-stop');
    this.send('synthesize-stopped');
    this.streamed = true;
  }

  private async streamSpeak(stream: { voiceId: string; started: boolean }, text: string): Promise<void> {
    if (!text.trim()) return;
    const voice = this.app.synthesizer.resolveVoice({ text, voice: stream.voiceId });
    if (!stream.started) this.send('audio-start', format(voice));
    stream.started = true;
    await this.speak(text, voice);
  }

  /** Speech as `audio-chunk` events, each sentence's as soon as it is spoken, in a job slot of the service. */
  private speak(text: string, voice: Voice): Promise<void> {
    if (text.length > MAX_TTS_TEXT) throw new WyomingProtocolError(`the text is longer than ${MAX_TTS_TEXT} characters`);
    const chunks = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        let drained = true;
        for (let at = 0; at < chunk.length; at += CHUNK_BYTES) {
          drained = this.send('audio-chunk', format(voice), chunk.subarray(at, Math.min(chunk.length, at + CHUNK_BYTES))) && drained;
        }
        if (drained || this.socket.destroyed) done();
        else this.socket.once('drain', () => done());
      },
    });
    const client = { id: `wyoming:${this.socket.remoteAddress ?? 'unknown'}`, signal: this.controller.signal, characters: text.length };
    return this.app.jobs.run('speech', client, (signal) =>
      this.app.synthesizer.streamAudio({ text, voice, encoding: 'pcm', speed: 1, signal, cachePartition: this.app.executor.cachePartition(client.id) }, chunks),
    );
  }
}

function format(voice: Voice): Record<string, unknown> {
  return { rate: voice.sampleRate, width: SAMPLE_BYTES, channels: 1 };
}

function textOf(event: WyomingEvent): string {
  const { text } = event.data;
  if (typeof text !== 'string') throw new WyomingProtocolError(`${event.type} has no text`);
  return text;
}

