// One Wyoming connection bounded as an HTTP server bounds one: events are read one at a time into a short queue and
// the socket is paused while it is full, one event is handled at a time, at most `eventsPerSecond`; every write waits
// for the client to read (`drain`) and a client that reads nothing for `writeTimeoutMs` is cut off; a connection that
// is slow to send an event, or sends none for long, is closed. What a refusal leaves queued is dropped.
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { WyomingConfig } from '../../config.js';
import { cancelReason, type AppError } from '../../errors.js';
import { encodeEvent, EventReader, WyomingProtocolError, type ReaderOptions, type WyomingEvent } from './events.js';

export type ConnectionBounds = Pick<WyomingConfig, 'headerTimeoutMs' | 'idleTimeoutMs' | 'writeTimeoutMs' | 'eventsPerSecond'>;

/** Whole events read ahead of the one being handled. */
export const QUEUE_LENGTH = 4;
/** After a refusal the client's bytes are read and dropped a while, so that it gets the `error` event, not a reset. */
const LINGER_MS = 2000;
const LINGER_BYTES = 64 * 1024;

export class WyomingConnection {
  private readonly reader: EventReader;
  private readonly queue: WyomingEvent[] = [];
  private readonly controller = new AbortController();
  private busy = false;
  private closing = false;
  private lingered = 0;
  /** Whether a whole event has come yet. */
  private heard = false;
  private timer: { kind: 'header' | 'idle'; handle: NodeJS.Timeout } | undefined;
  private tokens: number;
  private refilledAt = performance.now();

  constructor(
    private readonly socket: Socket,
    private readonly bounds: ConnectionBounds,
    readerOptions: ReaderOptions,
    private readonly handle: (event: WyomingEvent) => Promise<void>,
    readonly log: FastifyBaseLogger,
  ) {
    this.reader = new EventReader(readerOptions);
    this.tokens = bounds.eventsPerSecond;
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', () => undefined);
    socket.once('close', () => {
      this.stop(cancelReason('CLIENT_CLOSED'));
      this.watch();
    });
    this.watch();
  }

  /** Aborted when the connection closes or is refused: the signal its synthesis runs under. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Writes an event's bytes; resolves once the client has read enough to take more (or is gone). */
  async send(bytes: Buffer): Promise<void> {
    if (this.closing || this.socket.destroyed) return;
    if (this.socket.write(bytes)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      const timer = setTimeout(() => {
        this.log.info({ writeTimeoutMs: this.bounds.writeTimeoutMs }, 'Wyoming client read nothing in time: disconnected');
        this.socket.destroy();
      }, this.bounds.writeTimeoutMs);
      this.socket.once('drain', done);
      this.socket.once('close', done);
    });
  }

  /** An `error` event, then the connection closed: what was queued is dropped, what is in progress stopped, nothing more parsed. */
  refuse(text: string, code: string, reason: AppError = cancelReason('JOB_CANCELLED')): void {
    if (this.closing) return;
    this.log.info({ code, text }, 'Wyoming connection refused');
    this.stop(reason);
    this.finish(encodeEvent('error', { text, code }));
  }

  /** A connection not taken: an `error` event, nothing read at all, destroyed after the lingering time whatever it does. */
  turnAway(text: string, code: string): void {
    this.log.info({ code, text }, 'Wyoming connection turned away');
    this.socket.pause();
    this.stop(cancelReason('JOB_CANCELLED'));
    this.watch();
    this.socket.end(encodeEvent('error', { text, code }));
    setTimeout(() => this.socket.destroy(), LINGER_MS).unref();
  }

  /** Closes the connection: an `error` event if something was in progress (`reason`), else a plain close. */
  close(reason: AppError): void {
    if (this.busy) this.refuse(reason.message, reason.code, reason);
    else if (!this.closing) {
      this.stop(reason);
      this.finish();
    }
  }

  private stop(reason: AppError): void {
    this.closing = true;
    this.queue.length = 0;
    this.controller.abort(reason);
  }

  /** Ends the connection after `last`, reading and dropping what still comes a while (lingering close), then destroys it. */
  private finish(last?: Buffer): void {
    this.watch();
    if (last) this.socket.end(last);
    else this.socket.end();
    this.socket.resume();
    setTimeout(() => this.socket.destroy(), LINGER_MS).unref();
  }

  private receive(chunk: Buffer): void {
    if (this.closing) {
      this.lingered += chunk.length;
      if (this.lingered > LINGER_BYTES) this.socket.destroy();
      return;
    }
    this.reader.write(chunk);
    this.take();
  }

  /** Whole events from the reader into the queue while it has room; the socket is read only while there is. */
  private take(): void {
    try {
      while (this.queue.length < QUEUE_LENGTH) {
        const event = this.reader.next();
        if (!event) break;
        this.heard = true;
        this.queue.push(event);
      }
    } catch (error) {
      if (!(error instanceof WyomingProtocolError)) throw error;
      this.refuse(error.message, error.code);
      return;
    }
    if (this.queue.length >= QUEUE_LENGTH) this.socket.pause();
    else this.socket.resume();
    if (!this.busy && this.queue.length > 0) void this.work();
    this.watch();
  }

  private async work(): Promise<void> {
    this.busy = true;
    this.watch();
    for (let event = this.queue.shift(); event && !this.closing; event = this.queue.shift()) {
      this.take();
      await this.turn();
      if (this.closing) break;
      try {
        await this.handle(event);
      } catch (error) {
        if (!(error instanceof WyomingProtocolError)) throw error;
        this.refuse(error.message, error.code);
      }
    }
    this.busy = false;
    this.watch();
  }

  /** Waits for the event's turn under the rate (a bucket of one second's events). */
  private async turn(): Promise<void> {
    const rate = this.bounds.eventsPerSecond;
    const now = performance.now();
    this.tokens = Math.min(rate, this.tokens + ((now - this.refilledAt) / 1000) * rate);
    this.refilledAt = now;
    if (this.tokens < 1) {
      await sleep(((1 - this.tokens) / rate) * 1000);
      this.tokens = 1;
      this.refilledAt = performance.now();
    }
    this.tokens -= 1;
  }

  /**
   * The timer of a connection waiting on its client: the header timeout from its opening or an event's first bytes
   * until the event is whole (not restarted by more bytes), else the idle timeout; none while an event is handled.
   */
  private watch(): void {
    const waiting = !this.closing && !this.busy && this.queue.length === 0;
    const kind = !waiting ? undefined : this.reader.partial || !this.heard ? 'header' : 'idle';
    if (this.timer?.kind === kind) return;
    if (this.timer) clearTimeout(this.timer.handle);
    this.timer = undefined;
    if (!kind) return;
    const ms = kind === 'header' ? this.bounds.headerTimeoutMs : this.bounds.idleTimeoutMs;
    const handle = setTimeout(() => {
      this.timer = undefined;
      if (kind === 'header') this.refuse(`no whole event came in ${ms} ms`, 'timeout');
      else {
        this.log.info({ idleTimeoutMs: ms }, 'Wyoming connection idle: closed');
        this.close(cancelReason('CLIENT_CLOSED'));
      }
    }, ms);
    handle.unref();
    this.timer = { kind, handle };
  }
}
