import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites start real servers and databases; two cores are the norm on build machines.
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
