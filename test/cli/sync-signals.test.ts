import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { daemonEnv, runWsmirror, type RunResult } from '../helpers/processes.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * `wsmirror sync` stopped by SIGTERM or SIGINT mid-backfill, as a real process: the running
 * transaction ends (commits or rolls back), the process exits 1 (the mirror is not current) with
 * the reason on stderr, and the next sync goes on from what was committed.
 */
const FIELDS = [
  { name: 'name', type: 'string' as const, labels: { '': 'Name' } },
  { name: 'qty', type: 'number' as const, labels: { '': 'Qty' } },
];
const ROWS = 20_000;

forEachDialect('wsmirror sync stops on a signal', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  async function count(): Promise<number> {
    const entry = await catalogEntry(h.tm, 'big', 'items');
    if (!entry) return 0;
    const [row] = await h.tm.sql<{ n: number | string }>(`SELECT count(*) AS n FROM ${h.tm.table(entry.sqlName)}`);
    return Number(row!.n);
  }

  /** Runs `wsmirror sync` and sends `signal` once its log shows the backfill under way. */
  function signalledRun(signal: NodeJS.Signals): Promise<RunResult> {
    let send: () => void = () => undefined;
    let sent = false;
    return runWsmirror(['sync'], daemonEnv(h.emu, h.tm, { WSMIRROR_LOG_LEVEL: 'info', WSMIRROR_LOG_PROGRESS_INTERVAL: '50ms' }), {
      killAfterMs: 60_000,
      onSpawn: (_kill, child) => {
        send = () => child.kill(signal);
      },
      killWhen: (stdout) => {
        if (!sent && stdout.split('"task":"big.items"').length > 2) {
          sent = true;
          send();
        }
        return false;
      },
    });
  }

  it('finishes the open transaction and exits 1 on SIGTERM and on SIGINT; the next sync converges', async () => {
    h = await startSyncHarness(dialect);
    await h.upstream.createModule('big');
    await h.upstream.createTable('big', 'items', { hasHistory: true }, FIELDS);
    await h.upstream.createRecords('big', 'items', Array.from({ length: ROWS }, (_, i) => ({ name: `row ${i}`, qty: i })));
    // 20 ms per answer: the backfill lasts over a second, so the signal, sent once it is under
    // way, comes before its end however fast the sync (without it, one finished first).
    await h.upstream.setFaults({ latencyMs: 20 });

    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const run = await signalledRun(signal);
      expect({ code: run.code, signal: run.signal }, run.stderr).toEqual({ code: 1, signal: null });
      expect(run.stderr).toContain(`wsmirror sync: stopped by ${signal}`);
      // What was finished and what was left, in words.
      expect(run.stderr).toMatch(/left: big\.items \(stopped after [\d,]+ rows read\); the next run continues from what was committed/);
      const rows = await count();
      expect(rows).toBeLessThan(ROWS);
    }

    await h.upstream.setFaults({ latencyMs: 0 });
    const done = await runWsmirror(['sync'], daemonEnv(h.emu, h.tm));
    expect(done.code, done.stderr).toBe(0);
    await h.expectConverged('big', 'items');
  }, 180_000);
});
