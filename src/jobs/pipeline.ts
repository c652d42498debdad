import type { JobExecutor } from './executor.js';
import type { JobFollowUp } from './follow-up.js';
import type { JobResults } from './results/job-results.js';

/** How jobs run and what follows them, the same in the API process and in a worker (wired by app/job-pipeline.ts). */
export interface JobPipeline {
  executor: JobExecutor;
  results: JobResults;
  followUp: JobFollowUp;
}
