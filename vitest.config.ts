import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A PostgreSQL server for the whole run: WSMIRROR_TEST_PG_URL's, or one started for it.
    globalSetup: ['test/helpers/postgres-global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites start real servers and databases; two cores are the norm on build machines.
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
