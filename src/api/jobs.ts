import { Type, type Static } from '@sinclair/typebox';

export const JobParams = Type.Object(
  { id: Type.String({ pattern: '^[A-Za-z0-9_-]{22}$', description: 'A job id: 22 characters of base64url.' }) },
  { additionalProperties: false },
);
export type JobParams = Static<typeof JobParams>;

const JobErrorBody = Type.Object({
  code: Type.String(),
  message: Type.String(),
  field: Type.Optional(Type.String()),
  retryAfter: Type.Optional(Type.Number()),
});

export const JobStatus = Type.Object(
  {
    id: Type.String(),
    operation: Type.Union([Type.Literal('tts'), Type.Literal('tts-video')]),
    state: Type.Union(['queued', 'running', 'succeeded', 'failed', 'cancelled'].map((state) => Type.Literal(state)), {
      description: 'queued → running → succeeded, failed or cancelled.',
    }),
    createdAt: Type.String({ format: 'date-time' }),
    startedAt: Type.Optional(Type.String({ format: 'date-time' })),
    finishedAt: Type.Optional(Type.String({ format: 'date-time' })),
    position: Type.Optional(Type.Integer({ description: 'Queued: jobs that run before this one.' })),
    etaSeconds: Type.Optional(
      Type.Integer({ description: 'Queued or running: expected seconds until it finishes, from measured job times; absent while no worker runs (`workers: 0`).' }),
    ),
    workers: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Queued, with REDIS_URL: workers alive now (their heartbeats); 0: the job waits until one starts.' }),
    ),
    progress: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'Running: percent done (of the text spoken, for speech; a video is at 50 when its narration is spoken).' })),
    characters: Type.Optional(Type.Integer({ minimum: 0, description: 'Running, once it speaks: characters of its sentences (an SSML document\'s without its markup; the spaces and line breaks between sentences not counted).' })),
    charactersDone: Type.Optional(Type.Integer({ minimum: 0, description: 'Running: of `characters`, how many are spoken (never falls; a job continued by another worker starts where the last one stopped).' })),
    secondsDone: Type.Optional(Type.Number({ minimum: 0, description: 'Running: seconds of audio spoken so far (after `speed`), to the tenth.' })),
    result: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Succeeded: the body the synchronous request answers with.' })),
    error: Type.Optional(JobErrorBody),
    expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the job is forgotten (JOB_RETENTION_HOURS after it finished).' })),
  },
  { $id: 'JobStatus' },
);
export type JobStatus = Static<typeof JobStatus>;

export const JobAccepted = Type.Object({
  status: Type.Literal('accepted'),
  id: Type.String({ description: 'The job id.' }),
  statusUrl: Type.String({ description: 'GET it for the state (also in Location).' }),
  state: Type.Union([Type.Literal('queued'), Type.Literal('succeeded')], {
    description: '`queued`; `succeeded` when the request was answered from the cache (the job is done already: GET it for the result).',
  }),
});
export type JobAccepted = Static<typeof JobAccepted>;
