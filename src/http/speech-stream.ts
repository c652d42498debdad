import { Transform } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PreparedSpeech } from '../usecases/speech-streams.js';
import { jobClient } from './job-client.js';
import { logLevelOf, toAppError } from './plugins/error-handler.js';

/** Encoded audio waits here for a slow reader, rather than hold synthesis (and its job slot) back. */
const BODY_BUFFER_BYTES = 16 * 1024 * 1024;

/** How the bytes a job writes are framed on the wire: as they are (the default), or wrapped (server-sent events, JSON lines). */
export interface Framing {
  chunk?: (chunk: Buffer) => Buffer | string;
  /** Sent after the last chunk. */
  end?: () => string | undefined;
}

export interface SpeechStream {
  /** What is spoken, resolved by the use case (app.speech.prepare). */
  speech: PreparedSpeech;
  /** The response's type when framed (server-sent events, JSON); by default the audio's. */
  contentType?: string;
  /** Logged with the outcome. */
  facts: Record<string, unknown>;
  framing?: Framing;
}

/**
 * Speaks a prepared request through the speech use case (in a job slot: limits, quotas, metrics) and sends what it
 * writes as the response, chunked as it comes. A failure before the first bytes still gets a status and an error body (thrown); after them, only a cut-off
 * response, counted as a cut stream.
 */
export async function sendSpeechStream(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, stream: SpeechStream): Promise<FastifyReply> {
  const { body, begun } = responseBody(stream.framing ?? {});
  const job = app.speech
    .stream(jobClient(request, stream.speech.characters), stream.speech, body)
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  const early = await Promise.race([begun.then(() => undefined), job]);
  if (early !== undefined) {
    body.destroy();
    throw early;
  }
  const { facts } = stream;
  void job.then((failure) => {
    if (failure === undefined) {
      request.log.info(facts, 'speech streamed');
      return;
    }
    const stopped = toAppError(failure);
    if (stopped.code !== 'CLIENT_CLOSED') app.metrics.streamCut(stopped.code);
    request.log[logLevelOf(stopped)]({ ...facts, code: stopped.code, err: failure }, 'speech stream stopped');
    body.destroy(failure instanceof Error ? failure : new Error(String(failure)));
  });
  reply.header('cache-control', 'no-store');
  reply.type(stream.contentType ?? stream.speech.contentType);
  return reply.send(body);
}

/** The response body, framed; `begun` resolves at the first bytes (or at the end, if there are none). */
function responseBody(framing: Framing): { body: Transform; begun: Promise<void> } {
  let begin = () => {};
  const begun = new Promise<void>((resolve) => {
    begin = resolve;
  });
  const body = new Transform({
    highWaterMark: BODY_BUFFER_BYTES,
    transform(chunk: Buffer, _encoding, callback) {
      begin();
      callback(null, framing.chunk ? framing.chunk(chunk) : chunk);
    },
    flush(callback) {
      begin();
      callback(null, framing.end?.());
    },
  });
  return { body, begun };
}
