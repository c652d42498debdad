import { defineConfig } from 'vitest/config';

/** Tests that need no server, engine, ffmpeg or Redis: `*.unit.test.ts`, beside the others of their folder. */
const UNIT = 'test/**/*.unit.test.ts';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      // First, and alone: pure code, done in well under a minute (`npm run test:unit`).
      { extends: true, test: { name: 'unit', include: [UNIT], sequence: { groupOrder: 0 } } },
      // Then the real engines, ffmpeg, Redis, S3 and browsers, two files at a time on two cores: each file builds its
      // own app in its own temporary folders on ports the kernel hands out, so files share no state.
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: [UNIT], maxWorkers: 2, sequence: { groupOrder: 1 } } },
    ],
  },
});
