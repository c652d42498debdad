// Which ONNX Runtime a host runs its models on: 1.32 from PyPI through voxreel's binding (ort-library.ts) where
// script/setup has installed it, else onnxruntime-node's 1.30, with the reason said once (OnnxRuntimeInfo.fallback).
import { access } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { npmRuntime } from './npm-session.js';
import type { OnnxRuntime, RuntimeSource } from './session.js';

/** The version script/install-onnxruntime installs (pinned in onnxruntime.lock.json). */
export const PYPI_ONNXRUNTIME_VERSION = '1.32.0';
/** Where script/install-onnxruntime puts PyPI's library: `runtime/` at the top of the tree (gitignored). */
export const DEFAULT_ONNXRUNTIME_LIBRARY = fileURLToPath(
  new URL(`../../../runtime/onnxruntime-${PYPI_ONNXRUNTIME_VERSION}/libonnxruntime.so.${PYPI_ONNXRUNTIME_VERSION}`, import.meta.url),
);
/**
 * The environment of a host process that loads ONNX Runtime, cleared of the variables by which its library tells a
 * CI machine (the list is in the 1.30 and 1.32 libraries): with one of them set, a Piper host on one intra-op thread
 * was killed by SIGSEGV on its first run, on either runtime (CI=1 in .ci/run; CI= or unset: no crash). Not understood
 * further; a host has no use for them.
 */
export const ORT_HOST_ENV: Readonly<Record<string, string>> = Object.fromEntries(
  ['CI', 'TF_BUILD', 'GITHUB_ACTIONS', 'GITLAB_CI', 'CIRCLECI', 'TRAVIS', 'JENKINS_URL', 'CODEBUILD_BUILD_ID', 'BUILDKITE', 'TEAMCITY_VERSION', 'APPVEYOR', 'BITBUCKET_BUILD_NUMBER'].map(
    (name) => [name, ''],
  ),
);

/** ONNXRUNTIME_LIBRARY's value that asks for onnxruntime-node's runtime without looking for another. */
export const NPM_RUNTIME = 'npm';

/** What a host reports of its runtime (/readyz names the version). */
export interface OnnxRuntimeInfo {
  version: string;
  source: RuntimeSource;
  /** Why PyPI's library is not the one in use (the one line the log says of it); null when it is. */
  fallback: string | null;
}

export interface LoadedRuntime {
  runtime: OnnxRuntime;
  info: OnnxRuntimeInfo;
}

/**
 * `library`: ONNXRUNTIME_LIBRARY (a library file, or `npm`); none, the installed one. Loads the library into this
 * thread's process: the runtime's sessions live where this is called (a Piper host's inference thread).
 */
export async function loadOnnxRuntime(library: string | undefined): Promise<LoadedRuntime> {
  const file = library || DEFAULT_ONNXRUNTIME_LIBRARY;
  let reason: string;
  if (file === NPM_RUNTIME) {
    reason = 'ONNXRUNTIME_LIBRARY=npm asks for it';
  } else {
    try {
      await access(file);
      const { OrtLibrary } = await import('./ort-library.js');
      const runtime = OrtLibrary.load(file);
      return { runtime, info: { version: runtime.version, source: 'pypi', fallback: null } };
    } catch (error) {
      const why = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'is not installed' : `could not be loaded (${(error as Error).message.split('\n')[0]})`;
      reason = `${file} ${why}; script/setup installs ONNX Runtime ${PYPI_ONNXRUNTIME_VERSION} from PyPI (faster to start and to speak)`;
    }
  }
  const runtime = await npmRuntime();
  return { runtime, info: { version: runtime.version, source: 'npm', fallback: reason } };
}
