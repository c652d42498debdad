// The Wyoming protocol (Home Assistant's voice services) on a TCP port of the API process: `describe` → `info` (every
// voice a TTS voice), `synthesize` → `audio-start`, `audio-chunk`s as the sentences are spoken, `audio-stop`, and the
// streaming form (`synthesize-start`, `-chunk`s, `-stop` → `synthesize-stopped`). Speech goes through the service's
// own synthesizer in its job slots (limits, metrics), as /v1/audio/speech does; a bad event gets an `error` event and
// the connection is closed, a failed synthesis an `error` event. Each connection is bounded by connection.ts, and
// each address to `connectionsPerAddress` of them: Wyoming has no authentication.
import { createServer, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { MAX_TTS_TEXT } from '../../api/speech.js';
import type { WyomingConfig } from '../../config.js';
import { cancelReason } from '../../errors.js';
import { finishedSentences, type PreparedSpeech } from '../../usecases/speech-streams.js';
import type { Voice } from '../../usecases/vocabulary.js';
import { version } from '../../version.js';
import { toAppError } from '../plugins/error-handler.js';
import { WyomingConnection } from './connection.js';
import { encodeEvent, WyomingProtocolError, type EventBounds, type ReaderOptions, type WyomingEvent } from './events.js';
import { announceWyoming, type ZeroconfAnnouncement } from './zeroconf.js';

/** Bytes of audio per `audio-chunk` (wyoming-piper sends 1024 samples of 16-bit mono). */
const CHUNK_BYTES = 2048;
const SAMPLE_BYTES = 2;

/** JSON data that can hold MAX_TTS_TEXT characters (each escaped as `\uXXXX` at worst) and a voice; a longer event is refused unread. */
const TEXT_DATA_BYTES = MAX_TTS_TEXT * 6 + 4096;
const SMALL_DATA_BYTES = 4096;
/** The events voxreel takes, and the JSON data each may carry; none carries a payload. */
const DATA_BYTES = new Map([
  ['describe', SMALL_DATA_BYTES],
  ['ping', SMALL_DATA_BYTES],
  ['synthesize', TEXT_DATA_BYTES],
  ['synthesize-start', SMALL_DATA_BYTES],
  ['synthesize-chunk', TEXT_DATA_BYTES],
  ['synthesize-stop', SMALL_DATA_BYTES],
]);

const READER: ReaderOptions = {
  // Data may also come inside the header line (the protocol's older form).
  line: TEXT_DATA_BYTES + SMALL_DATA_BYTES,
  bounds: (type): EventBounds => {
    const data = DATA_BYTES.get(type);
    if (data === undefined) throw new WyomingProtocolError(`voxreel speaks text (describe, synthesize, synthesize-start/-chunk/-stop), not "${type.slice(0, 50)}"`, 'unsupported-event');
    return { data, payload: 0 };
  },
};

export interface WyomingServer {
  port: number;
  /** Its zeroconf announcement, when asked for and made. */
  zeroconf?: ZeroconfAnnouncement;
  close(): Promise<void>;
}

/** Starts serving Wyoming on `config.port` (0: a free one) of `config.host`, announced by zeroconf as `config.zeroconf` if given. */
export async function startWyoming(app: FastifyInstance, config: WyomingConfig): Promise<WyomingServer> {
  const { port, host } = config;
  const connections = new Set<WyomingConnection>();
  const perAddress = new Map<string, number>();
  const describe = describer(app);
  const arrivals = new ArrivalRate(config.connectionsPerSecond);
  const server: Server = createServer((socket) => {
    const address = socket.remoteAddress ?? '';
    // A storm of new connections from one address is dropped unread: nothing is made for them, not even a session.
    if (!arrivals.admit(address)) {
      socket.destroy();
      return;
    }
    const log = app.log.child({ wyoming: `${address}:${String(socket.remotePort)}` });
    const { connection } = new Session(app, describe, socket, config, log);
    const open = perAddress.get(address) ?? 0;
    if (open >= config.connectionsPerAddress) {
      connection.turnAway(`this address has ${open} Wyoming connections open, the most it may (WYOMING_MAX_CONNECTIONS_PER_ADDRESS)`, 'too-many-connections');
      return;
    }
    perAddress.set(address, open + 1);
    connections.add(connection);
    socket.once('close', () => {
      connections.delete(connection);
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left > 0) perAddress.set(address, left);
      else perAddress.delete(address);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  app.log.info({ port: bound, host }, 'Wyoming protocol served (Home Assistant: Settings → Devices & services → Wyoming Protocol)');
  // An announcement that fails leaves the server as it is: Home Assistant can still be given its address.
  const announced = config.zeroconf
    ? await announceWyoming({ name: config.zeroconf, port: bound, host, log: app.log }).catch((error: unknown) => {
        app.log.warn({ err: error }, 'Zeroconf: the Wyoming server could not be announced; add it in Home Assistant by its host and port');
        return undefined;
      })
    : undefined;
  return {
    port: bound,
    zeroconf: announced,
    close: async () => {
      await announced?.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const connection of connections) connection.close(cancelReason('SHUTTING_DOWN'));
      await closed;
    },
  };
}

/** `describe`'s answer, encoded once per list of voices (some 65 KB with every voice), not once per event. */
function describer(app: FastifyInstance): () => Buffer {
  let described: { voices: readonly Voice[]; event: Buffer } | undefined;
  return () => {
    const voices = app.voices.listVoices();
    if (described?.voices.length !== voices.length || voices.some((voice, index) => voice !== described?.voices[index])) {
      described = { voices, event: encodeEvent('info', info(voices)) };
    }
    return described.event;
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

/** One connection's conversation: what each event asks for, answered through its connection's bounds. */
class Session {
  readonly connection: WyomingConnection;
  private streaming: { voiceId: string; text: string; started: boolean } | undefined;
  /** A streamed text was just spoken: the plain `synthesize` clients send after it (for servers that do not stream) is not spoken again. */
  private streamed = false;

  constructor(
    private readonly app: FastifyInstance,
    private readonly describe: () => Buffer,
    private readonly socket: Socket,
    bounds: WyomingConfig,
    log: FastifyInstance['log'],
  ) {
    this.connection = new WyomingConnection(socket, bounds, READER, (event) => this.handle(event), log);
  }

  /** Whom the speech is charged to: Wyoming has no keys, so the client's address. */
  private get clientId(): string {
    return `wyoming:${this.socket.remoteAddress ?? 'unknown'}`;
  }

  private send(type: string, data?: Record<string, unknown>): Promise<void> {
    return this.connection.send(encodeEvent(type, data));
  }

  private async handle(event: WyomingEvent): Promise<void> {
    try {
      switch (event.type) {
        case 'describe':
          await this.connection.send(this.describe());
          return;
        case 'ping':
          await this.send('pong', event.data);
          return;
        case 'synthesize': {
          const text = textOf(event);
          if (this.streamed) {
            this.streamed = false;
            return;
          }
          await this.speakWhole(text, this.voiceFor(event.data.voice));
          return;
        }
        case 'synthesize-start':
          // An unknown voice is told now, not at the first sentence.
          this.streaming = { voiceId: this.app.speech.checkVoice(this.voiceFor(event.data.voice)).id, text: '', started: false };
          this.streamed = false;
          return;
        case 'synthesize-chunk':
          await this.streamChunk(textOf(event));
          return;
        case 'synthesize-stop':
          await this.streamStop();
          return;
        default:
          // The reader takes no other type.
          throw new WyomingProtocolError(`unexpected event "${event.type.slice(0, 50)}"`, 'unsupported-event');
      }
    } catch (error) {
      if (error instanceof WyomingProtocolError) throw error;
      // Cut off, refused or shut down: the connection has said so, or has no one to tell.
      if (this.connection.signal.aborted) return;
      const failure = toAppError(error);
      this.connection.log.info({ code: failure.code }, 'Wyoming synthesis failed');
      await this.send('error', { text: failure.message, code: failure.code });
    }
  }

  /**
   * The voice id asked for: by name (a voxreel voice id, as `info` lists them), the recommended voice of a language,
   * else the recommended English one (the start-up voice's rule); checked by the speech use case (checkVoice, prepare).
   */
  private voiceFor(asked: unknown): string {
    const wanted = typeof asked === 'object' && asked !== null ? (asked as { name?: unknown; language?: unknown }) : {};
    if (typeof wanted.name === 'string') return wanted.name;
    return this.app.voices.recommendedVoice(typeof wanted.language === 'string' ? wanted.language : undefined)?.id ?? '';
  }

  /** Raw 16-bit PCM at the voice's own rate, as Wyoming's `audio-chunk`s carry it; Wyoming has no lexicons. */
  private prepare(text: string, voiceId: string): Promise<PreparedSpeech> {
    return this.app.speech.prepare(this.clientId, { text, voice: voiceId, encoding: 'pcm', speed: 1 });
  }

  private async speakWhole(text: string, voiceId: string): Promise<void> {
    const speech = await this.prepare(text, voiceId);
    await this.send('audio-start', format(speech.voice));
    await this.speak(speech);
    await this.send('audio-stop');
  }

  /** The streamed text's whole sentences are spoken as they come; the last, maybe unfinished, waits for more. */
  private async streamChunk(text: string): Promise<void> {
    const stream = this.streaming;
    if (!stream) throw new WyomingProtocolError('synthesize-chunk before synthesize-start');
    stream.text += text;
    if (stream.text.length > MAX_TTS_TEXT) throw new WyomingProtocolError(`the streamed text is longer than ${MAX_TTS_TEXT} characters`, 'too-long');
    const { ready, rest } = finishedSentences(stream.text);
    if (!ready) return;
    stream.text = rest;
    await this.streamSpeak(stream, ready);
  }

  private async streamStop(): Promise<void> {
    const stream = this.streaming;
    if (!stream) throw new WyomingProtocolError('synthesize-stop before synthesize-start');
    this.streaming = undefined;
    if (stream.text.trim()) await this.streamSpeak(stream, stream.text);
    if (stream.started) await this.send('audio-stop');
    await this.send('synthesize-stopped');
    this.streamed = true;
  }

  private async streamSpeak(stream: { voiceId: string; started: boolean }, text: string): Promise<void> {
    if (!text.trim()) return;
    const speech = await this.prepare(text, stream.voiceId);
    if (!stream.started) await this.send('audio-start', format(speech.voice));
    stream.started = true;
    await this.speak(speech);
  }

  /** Speech as `audio-chunk` events, each sentence's as soon as it is spoken, in a job slot of the service. */
  private speak(speech: PreparedSpeech): Promise<void> {
    const { voice, characters } = speech;
    // Each write waits until the client has read (or the connection is cut off): a client that does not read holds back its own synthesis only.
    const chunks = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        const events: Buffer[] = [];
        for (let at = 0; at < chunk.length; at += CHUNK_BYTES) events.push(encodeEvent('audio-chunk', format(voice), chunk.subarray(at, Math.min(chunk.length, at + CHUNK_BYTES))));
        this.connection.send(Buffer.concat(events)).then(() => done(), done);
      },
    });
    return this.app.speech.stream({ id: this.clientId, signal: this.connection.signal, characters }, speech, chunks);
  }
}

function format(voice: Pick<Voice, 'sampleRate'>): Record<string, unknown> {
  return { rate: voice.sampleRate, width: SAMPLE_BYTES, channels: 1 };
}

function textOf(event: WyomingEvent): string {
  const { text } = event.data;
  if (typeof text !== 'string') throw new WyomingProtocolError(`${event.type} has no text`);
  // Told before anything is said: no `audio-start` ahead of this refusal.
  if (text.length > MAX_TTS_TEXT) throw new WyomingProtocolError(`the text is longer than ${MAX_TTS_TEXT} characters`, 'too-long');
  return text;
}


/**
 * New connections per address in the current second, at most `perSecond` (WYOMING_CONNECTIONS_PER_SECOND): Home
 * Assistant opens one per request, a client that reconnects without pause opens thousands (measured: about 5,500 in
 * 10 s, +155 MB and an HTTP p99 of 86 ms before this bound).
 */
export class ArrivalRate {
  private readonly seconds = new Map<string, { second: number; count: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {}

  admit(address: string): boolean {
    const second = Math.floor(this.now() / 1000);
    // Addresses not seen this second are forgotten now and then, so the map holds only the current second's.
    if (this.seconds.size > 1024) for (const [key, entry] of this.seconds) if (entry.second !== second) this.seconds.delete(key);
    const entry = this.seconds.get(address);
    if (!entry || entry.second !== second) {
      this.seconds.set(address, { second, count: 1 });
      return true;
    }
    entry.count += 1;
    return entry.count <= this.perSecond;
  }
}
