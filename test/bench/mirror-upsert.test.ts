import { describe, expect, it } from 'vitest';

// `npm run bench` imports each scenario and calls its run(options); importing must not run it.
describe('bench/mirror-upsert.ts', () => {
  it('exports run(options) and does nothing on import', async () => {
    const scenario = await import('../../bench/mirror-upsert.ts');
    expect(typeof scenario.run).toBe('function');
    // Postgres from WSMIRROR_TEST_PG_URL, which the test run always provides.
    const result = await scenario.run({ rows: '300', 'strategy-rows': '200' });
    expect(result.rows).toBe(300);
    const measured = [
      { batch: 10_000, insertRowsPerSec: expect.any(Number), updateRowsPerSec: expect.any(Number) },
      { batch: 100, insertRowsPerSec: expect.any(Number), updateRowsPerSec: expect.any(Number) },
    ];
    expect(result['sqlite']).toEqual(measured);
    expect(result['postgres']).toEqual(measured);
  });
});
