/**
 * The two ONNX Runtimes the benchmark sets side by side: 1.32 from PyPI (what script/setup installs and the service
 * uses) and 1.30 from npm (onnxruntime-node, the fallback where the PyPI library is missing).
 */
export const RUNTIMES = ['pypi', 'npm'] as const;
export type Runtime = (typeof RUNTIMES)[number];

/** The environment that makes a service (and its Piper host) run on `runtime`. */
export function runtimeEnv(runtime: Runtime): Record<string, string> {
  return runtime === 'npm' ? { ONNXRUNTIME_LIBRARY: 'npm' } : {};
}

export const RUNTIME_LABELS: Record<Runtime, string> = { pypi: 'ONNX Runtime 1.32 (PyPI)', npm: 'ONNX Runtime 1.30 (npm)' };
