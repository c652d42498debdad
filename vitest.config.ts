import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real engines and ffmpeg on 2 cores: run files one after another so timings stay sane.
    fileParallelism: false,
  },
});
