import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/daemon/metrics.ts';
import { evaluateReadiness } from '../../src/daemon/readiness.ts';

/**
 * `/readyz` judges lag as `wsmirror status` does: `sync.maxLag`, plus `sync.fullScanEvery` for a
 * table without history, whose lag climbs by a scan interval between two scans by design.
 */
describe('lag bounds of /readyz', () => {
  const MIN = 60_000;
  const bounds = { maxLagMs: 5 * MIN, fullScanEveryMs: 10 * MIN };
  const lastCycle = { result: 'success' as const, startedAt: new Date(0), finishedAt: new Date(1), durationMs: 1 };

  function metricsAt(now: number, tables: { table: string; mode: 'history' | 'fullscan'; lagMs: number }[]): Metrics {
    const metrics = new Metrics({ processMetrics: false, now: () => now });
    metrics.setTables(tables.map((t) => ({ table: t.table, mode: t.mode, currentAsOf: new Date(now - t.lagMs) })));
    return metrics;
  }

  it('a full-scan table between two scans keeps the daemon ready; the same lag on a history table does not', () => {
    const now = Date.parse('2026-03-02T10:00:00Z');
    const between = metricsAt(now, [
      { table: 'crm.notes', mode: 'fullscan', lagMs: 8 * MIN },
      { table: 'crm.deals', mode: 'history', lagMs: 30_000 },
    ]);
    expect(evaluateReadiness({ lastCycle, maxLag: between.maxLag(bounds) })).toMatchObject({ ready: true });

    const stuck = metricsAt(now, [
      { table: 'crm.notes', mode: 'fullscan', lagMs: 8 * MIN },
      { table: 'crm.deals', mode: 'history', lagMs: 6 * MIN },
    ]);
    const report = evaluateReadiness({ lastCycle, maxLag: stuck.maxLag(bounds) });
    expect(report.ready).toBe(false);
    expect(report.maxLag).toEqual({ table: 'crm.deals', seconds: 360, boundSeconds: 300 });
    expect(report.reason).toBe('table crm.deals lags upstream by 360 s (bound 300 s)');

    const overdueScan = metricsAt(now, [{ table: 'crm.notes', mode: 'fullscan', lagMs: 16 * MIN }]);
    expect(evaluateReadiness({ lastCycle, maxLag: overdueScan.maxLag(bounds) })).toMatchObject({
      ready: false, maxLag: { table: 'crm.notes', boundSeconds: 900 },
    });
  });
  it('a full-scan table whose scans take long keeps the daemon ready until its next scan is overdue', () => {
    const now = Date.parse('2026-03-02T10:00:00Z');
    // The last scan began 18 minutes ago and took 7: due 10 minutes after it ended, it starts
    // within the next minute, and its rows count only once it ends.
    const metricsWith = (lagMs: number) => {
      const metrics = new Metrics({ processMetrics: false, now: () => now });
      metrics.setTables([{ table: 'crm.notes', mode: 'fullscan', currentAsOf: new Date(now - lagMs), lastPullAt: new Date(now - lagMs + 7 * MIN) }]);
      return metrics;
    };
    expect(evaluateReadiness({ lastCycle, maxLag: metricsWith(18 * MIN).maxLag(bounds) })).toMatchObject({
      ready: true, maxLag: { table: 'crm.notes', seconds: 1080, boundSeconds: 1320 },
    });
    expect(evaluateReadiness({ lastCycle, maxLag: metricsWith(23 * MIN).maxLag(bounds) })).toMatchObject({ ready: false });
  });
});
