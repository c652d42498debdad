import { Type, type Static, type TObject } from '@sinclair/typebox';
import type { ErrorBody } from '../../api/errors.js';
import type { JobAccepted, JobStatus } from '../../api/jobs.js';
import { MAX_TTS_TEXT, TtsRequest, type TtsResponse } from '../../api/speech.js';
import { NonBlankText } from '../../api/fields.js';
import { TtsVideoRequest } from '../../api/video.js';
import type { VoiceList } from '../../api/voices.js';

/**
 * The HTTP API as the MCP tools call it: a request answered by the very routes clients call (validation, access,
 * per-client limits, metrics and errors included), so an agent's request takes no second code path.
 */
export type ServiceApi = (request: { method: 'GET' | 'POST'; url: string; body?: Record<string, unknown> }) => Promise<{ status: number; body: unknown }>;

/** A 4xx or 5xx answer of the API, carried to the tool's caller as an MCP tool error. */
export class ServiceError extends Error {
  constructor(readonly error: ErrorBody['error']) {
    super(error.message);
    this.name = 'ServiceError';
  }
}

async function call<T>(api: ServiceApi, request: Parameters<ServiceApi>[0]): Promise<T> {
  const { status, body } = await api(request);
  if (status >= 400) {
    const error = (body as Partial<ErrorBody> | undefined)?.error;
    throw new ServiceError(error ?? { code: 'INTERNAL_ERROR', message: `The service answered ${status}.`, requestId: '' });
  }
  return body as T;
}

/** What a tool returns: its structured content and a line or two for a model that reads text only. */
export interface ToolAnswer {
  structured: Record<string, unknown>;
  text: string;
}

export interface ToolContext {
  api: ServiceApi;
  /** Where the HTTP API is reached (`https://host`), to make a job's status URL absolute; undefined over stdio. */
  baseUrl: string | undefined;
}

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: TObject;
  outputSchema: TObject;
  run(args: Record<string, unknown>, context: ToolContext): Promise<ToolAnswer>;
}

const VoiceSummary = Type.Object({
  id: Type.String({ description: 'The id to pass as `voice`.' }),
  name: Type.String(),
  language: Type.String({ description: 'BCP-47 tag, e.g. en-US.' }),
  gender: Type.Union([Type.Literal('female'), Type.Literal('male'), Type.Null()]),
  engine: Type.String(),
  recommended: Type.Boolean({ description: 'The most natural voice installed for its language.' }),
});
type VoiceSummary = Static<typeof VoiceSummary>;

const ListVoicesInput = Type.Object(
  {
    language: Type.Optional(
      Type.String({ minLength: 1, maxLength: 35, description: 'Only voices of this BCP-47 language, as a prefix: `en` finds en-US and en-GB, `en-GB` only en-GB.' }),
    ),
  },
  { additionalProperties: false },
);

async function listVoices(api: ServiceApi, language: string | undefined): Promise<VoiceSummary[]> {
  const query = language === undefined ? '' : `?language=${encodeURIComponent(language)}`;
  const { voices } = await call<VoiceList>(api, { method: 'GET', url: `/voices${query}` });
  return voices.map(({ id, name, language: tag, gender, engine, recommended }) => ({ id, name, language: tag, gender, engine, recommended: recommended === true }));
}

/** The voice a tool uses when none is given: the recommended English one (US first), else none and the API says so. */
async function defaultVoice(api: ServiceApi): Promise<string | undefined> {
  const english = (await listVoices(api, 'en')).filter((voice) => voice.recommended);
  return (english.find((voice) => voice.language === 'en-US') ?? english[0])?.id;
}

/**
 * A tool's arguments as the request's body: how to answer is the tool's to say (not `async`, not `webhook_url`), the
 * voice defaulted (a dialogue's turns name theirs).
 */
async function requestOf(args: Record<string, unknown>, api: ServiceApi): Promise<Record<string, unknown>> {
  const body = Object.fromEntries(Object.entries(args).filter(([field]) => !ANSWER_FIELDS.has(field)));
  return body.voice === undefined && body.segments === undefined ? { ...body, voice: await defaultVoice(api) } : body;
}

/** What says how to answer, the tool's own to decide. */
const ANSWER_FIELDS = new Set(['async', 'webhook_url', 'webhook_progress']);

const VoiceArgument = Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'A voice id from list_voices; default: the recommended English voice.' }));

// speak answers at once: a request's worth of text (make_video is a job, and takes a long job's).
const SpeakInput = Type.Composite([Type.Omit(TtsRequest, ['async', 'webhook_url', 'webhook_progress', 'timestamps', 'voice', 'text']), Type.Object({ text: Type.Optional(NonBlankText(MAX_TTS_TEXT)), voice: VoiceArgument })], {
  additionalProperties: false,
});

const TimedWord = Type.Object({
  word: Type.String(),
  start: Type.Number({ description: 'Seconds into the file.' }),
  end: Type.Number({ description: 'Seconds into the file.' }),
});

const SpeakOutput = Type.Object({
  url: Type.String({ description: 'The audio file.' }),
  duration: Type.Number({ description: 'Seconds.' }),
  format: Type.String(),
  voice: Type.String(),
  words: Type.Array(TimedWord, { description: 'Every word of the text with its times in the file.' }),
  captionsUrl: Type.Optional(Type.String({ description: 'WebVTT captions.' })),
  srtUrl: Type.Optional(Type.String({ description: 'SRT captions.' })),
  characters: Type.Integer(),
  cost: Type.Number(),
  currency: Type.String(),
});

const MakeVideoInput = Type.Composite([Type.Omit(TtsVideoRequest, ['async', 'webhook_url', 'webhook_progress', 'voice']), Type.Object({ voice: VoiceArgument })], {
  additionalProperties: false,
});

const MakeVideoOutput = Type.Object({
  id: Type.String({ description: 'The job id: pass it to get_job.' }),
  state: Type.String({ description: '`queued`, or `succeeded` when the same video was made before and still exists.' }),
  statusUrl: Type.String({ description: 'GET it on the HTTP API (with the same key) for the same state get_job gives.' }),
  hint: Type.String(),
});

const GetJobInput = Type.Object(
  { id: Type.String({ pattern: '^[A-Za-z0-9_-]{22}$', description: 'A job id from make_video.' }) },
  { additionalProperties: false },
);

const GetJobOutput = Type.Object({
  id: Type.String(),
  operation: Type.String({ description: '`tts-video` (make_video) or `tts`.' }),
  state: Type.String({ description: 'queued → running → succeeded, failed or cancelled.' }),
  progress: Type.Optional(Type.Integer({ description: 'Running: percent done.' })),
  position: Type.Optional(Type.Integer({ description: 'Queued: jobs ahead of this one.' })),
  etaSeconds: Type.Optional(Type.Integer({ description: 'Queued or running: expected seconds until done.' })),
  url: Type.Optional(Type.String({ description: 'Succeeded: the file made (the MP4 for a video).' })),
  result: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Succeeded: the whole answer (duration, captionsUrl, width, height …).' })),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() }, { description: 'Failed: why.' })),
});

const JOB_HINT = 'Rendering runs in the background: call get_job with this id every few seconds until its state is succeeded (its url is the MP4) or failed.';

export const TOOLS: readonly ToolDefinition[] = [
  {
    name: 'list_voices',
    title: 'List voices',
    description: 'Lists the voices speak and make_video accept, optionally for one language. Pick `recommended` ones: the most natural voice of each language.',
    inputSchema: ListVoicesInput,
    outputSchema: Type.Object({ voices: Type.Array(VoiceSummary) }),
    async run(args, { api }) {
      const voices = await listVoices(api, args.language as string | undefined);
      const recommended = voices.filter((voice) => voice.recommended).map((voice) => `${voice.id} (${voice.language})`);
      return { structured: { voices }, text: `${voices.length} voices; recommended: ${recommended.join(', ') || 'none'}.` };
    },
  },
  {
    name: 'speak',
    title: 'Text to speech',
    description:
      'Speaks text into an audio file (mp3 by default) and returns its URL, its duration and every word with its start and end in seconds. ' +
      'Up to 5000 characters; plain text or SSML. Waits for the file (a few seconds for a paragraph).',
    inputSchema: SpeakInput,
    outputSchema: SpeakOutput,
    async run(args, { api }) {
      const body = await call<TtsResponse>(api, { method: 'POST', url: '/tts', body: { ...(await requestOf(args, api)), timestamps: true } });
      const words = (body.words ?? []).map(({ word, start, end }) => ({ word, start, end }));
      const { url, duration, format, voice, captionsUrl, srtUrl, characters, cost, currency } = body;
      return {
        structured: { url, duration, format, voice, words, captionsUrl, srtUrl, characters, cost, currency },
        text: `Spoke ${words.length} words in ${duration.toFixed(2)} s with ${voice}: ${url}`,
      };
    },
  },
  {
    name: 'make_video',
    title: 'Narrated video',
    description:
      'Starts rendering a narrated MP4 of the text with word-by-word captions (1080p 16:9 by default; 720p renders faster) and returns a job id at once. ' +
      'It does not wait for the video: call get_job with the id until the state is succeeded, then its url is the MP4.',
    inputSchema: MakeVideoInput,
    outputSchema: MakeVideoOutput,
    async run(args, { api, baseUrl }) {
      const accepted = await call<JobAccepted>(api, { method: 'POST', url: '/tts-video', body: { ...(await requestOf(args, api)), async: true } });
      const statusUrl = `${baseUrl ?? ''}${accepted.statusUrl}`;
      return { structured: { id: accepted.id, state: accepted.state, statusUrl, hint: JOB_HINT }, text: `Job ${accepted.id} is ${accepted.state}. ${JOB_HINT}` };
    },
  },
  {
    name: 'get_job',
    title: 'Job state',
    description: "A make_video job's state: queued (position), running (progress in percent), succeeded (the video's url) or failed (the error).",
    inputSchema: GetJobInput,
    outputSchema: GetJobOutput,
    async run(args, { api }) {
      const job = await call<JobStatus>(api, { method: 'GET', url: `/jobs/${encodeURIComponent(String(args.id))}` });
      const url = typeof job.result?.url === 'string' ? job.result.url : undefined;
      const error = job.error && { code: job.error.code, message: job.error.message };
      const { id, operation, state, progress, position, etaSeconds, result } = job;
      const detail = url ?? (error ? `${error.code}: ${error.message}` : progress === undefined ? '' : `${progress} %`);
      return { structured: { id, operation, state, progress, position, etaSeconds, url, result, error }, text: `Job ${id} is ${state}${detail ? `: ${detail}` : ''}.` };
    },
  },
];

/** The voices as the `voxreel://voices` resource gives them (and `voxreel://voices/{id}` one of them). */
export async function voicesResource(api: ServiceApi): Promise<VoiceSummary[]> {
  return listVoices(api, undefined);
}
