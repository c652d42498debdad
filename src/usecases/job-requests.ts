// Queued speech and video (/tts, /tts-video, and the MCP tools through them): a request checked before anything is
// queued, answered from the request cache when an identical one's files still exist, else queued and awaited or
// followed. The one place a front door's job request becomes a job.
import type { Config } from '../config.js';
import type { JobExecutor } from '../jobs/executor.js';
import type { JobResults } from '../jobs/results/job-results.js';
import { cachedCost } from '../jobs/pricing.js';
import type { JobQueue } from '../jobs/queue.js';
import type { JobClient } from '../jobs/admission/slots.js';
import { assertAnswerableNow, chaptersJobText, outcomeOf, type JobAnswers, type QueuedOperation, type SpecOf } from '../jobs/spec.js';
import type { AssetStore } from '../assets/store.js';
import { checkWebhookUrl } from '../jobs/webhooks/delivery.js';
import { storageDown, storageUnavailable, type Storage } from '../storage/storage.js';

export interface JobRequestDeps {
  storage: Pick<Storage, 'unavailable' | 'writable'>;
  /** Books (EPUB assets) read as a request's text. */
  assets: Pick<AssetStore, 'book'>;
  executor: Pick<JobExecutor, 'check'>;
  results: Pick<JobResults, 'keyOf' | 'lookup'>;
  queue: Pick<JobQueue, 'submit'>;
  config: Pick<Config, 'webhooks'> & { cache: Pick<Config['cache'], 'hitPriceFactor'> };
}

export interface JobRequestOptions {
  /** Answer at once with where to follow the job, rather than when it is done. */
  detached: boolean;
  /** Called when the job ends (detached implied); checked as every webhook URL is. */
  webhookUrl?: string;
  /** With webhookUrl: also told of each further tenth of the job done. */
  webhookProgress?: boolean;
}

/** How a job request was answered: its body now (done, or an identical request's from the cache), or accepted to follow. */
export type JobAnswer<O extends QueuedOperation> =
  | { kind: 'answered'; body: JobAnswers[O]; voice: string; cached: boolean; file?: string }
  | { kind: 'accepted'; id: string; state: 'queued' | 'succeeded'; webhook: boolean };

export class JobRequests {
  constructor(private readonly deps: JobRequestDeps) {}

  /**
   * A request that gives its text as a book (`book`: the client's EPUB) with that text: its chapters, each title a
   * Markdown heading (chapters.ts); 400 naming `book` when they are more than a job takes. Others as they are.
   */
  async withBookText<O extends QueuedOperation>(spec: SpecOf<O>, owner: string): Promise<SpecOf<O>> {
    const { book: id, text } = spec.request;
    if (id === undefined || text !== '') return spec;
    const book = await this.deps.assets.book(id, owner, 'book');
    return { ...spec, request: { ...spec.request, text: chaptersJobText(book.chapters, 'book') } };
  }

  async submit<O extends QueuedOperation>(given: SpecOf<O>, client: JobClient, options: JobRequestOptions): Promise<JobAnswer<O>> {
    const { storage, executor, results, queue, config } = this.deps;
    const spec = await this.withBookText(given, client.id);
    // Storage out of reach (an upload found it so, and it still does not answer): no work is taken that could not be published.
    if (await storageDown(storage)) throw storageUnavailable();
    const webhookUrl = options.webhookUrl === undefined ? undefined : checkWebhookUrl(options.webhookUrl, config.webhooks).href;
    // A webhook is only for a job that outlives its request.
    const detached = webhookUrl !== undefined || options.detached;
    if (!detached) assertAnswerableNow(spec);
    const voice = await executor.check(spec, client.id);
    const cacheKey = results.keyOf(spec, voice, client.id);
    const found = await results.lookup(spec.operation, cacheKey);
    // The earlier answer, as this request would have had it: its own spelling of the voice, the price of a hit.
    const cached = found && {
      files: found.files,
      body: answered(found.body, { voice: spec.request.voice, cost: cachedCost(found.body.cost, config.cache.hitPriceFactor), cached: true }),
    };
    if (cached && !detached) return { kind: 'answered', body: cached.body, voice: voice.id, cached: true };
    const webhookProgress = webhookUrl !== undefined && options.webhookProgress === true;
    const job = await queue.submit(spec, { client, detached, webhookUrl, webhookProgress, cacheKey, cached });
    if (detached) return { kind: 'accepted', id: job.id, state: cached ? 'succeeded' : 'queued', webhook: webhookUrl !== undefined };
    const outcome = outcomeOf(spec.operation, await job.outcome());
    return { kind: 'answered', body: answered(outcome.body, { cached: false }), voice: voice.id, cached: false, file: outcome.files[0] };
  }
}

/** An answer with some of its fields restated (a body stays its operation's body). */
function answered<B extends JobAnswers[QueuedOperation]>(body: B, changes: Partial<Pick<B, 'voice' | 'cost' | 'cached'>>): B {
  return { ...body, ...changes };
}
