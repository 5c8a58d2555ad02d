import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { daemonEnv, runWsmirror, type RunResult } from '../helpers/processes.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * DESIGN §4.6: `kill -9` at any moment, then a restart, converges to upstream with nothing lost
 * or duplicated. The daemon runs as a real `wsmirror sync` process and is SIGKILLed mid-work.
 */
const FIELDS = [
  { name: 'name', type: 'string' as const, labels: { '': 'Name' } },
  { name: 'qty', type: 'number' as const, labels: { '': 'Qty' } },
  { name: 'seen', type: 'timestamp' as const, labels: { '': 'Seen' } },
];
const rows = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ name: `row ${from + i}`, qty: from + i, seen: new Date(1.7e12 + (from + i) * 1000).toISOString() }));

forEachDialect('crash safety', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  function env(): Record<string, string> {
    // Progress lines every 50 ms and a line per table pulled tell the test where the daemon is.
    return daemonEnv(h.emu, h.tm, {
      WSMIRROR_LOG_LEVEL: 'debug',
      WSMIRROR_LOG_PROGRESS_INTERVAL: '50ms',
    });
  }

  async function count(table: string): Promise<number> {
    const entry = await catalogEntry(h.tm, 'big', table);
    if (!entry) return 0;
    const [row] = await h.tm.sql<{ n: number | string }>(`SELECT count(*) AS n FROM ${h.tm.table(entry.sqlName)}`);
    return Number(row!.n);
  }

  /** Runs `wsmirror sync` and SIGKILLs it `delayMs` after `marker` has appeared `times` times in its log. */
  function killedRun(marker: string, times: number, delayMs = 0): Promise<RunResult> {
    let kill: () => void = () => undefined;
    let armed = false;
    return runWsmirror(['sync'], env(), {
      onSpawn: (k) => {
        kill = k;
      },
      killWhen: (stdout) => {
        if (armed || stdout.split(marker).length - 1 < times) return false;
        armed = true;
        setTimeout(kill, delayMs);
        return false;
      },
    });
  }

  /** Runs `wsmirror sync` and SIGKILLs it once the table holds more than `rows` rows. */
  function killedWhenCommitted(table: string, rows: number): Promise<RunResult> {
    let watch: ReturnType<typeof setInterval> | undefined;
    return runWsmirror(['sync'], env(), {
      onSpawn: (kill) => {
        let busy = false;
        watch = setInterval(() => {
          if (busy) return;
          busy = true;
          count(table).then((n) => {
            if (n > rows) kill();
          }, () => undefined).finally(() => (busy = false));
        }, 10);
      },
    }).finally(() => clearInterval(watch));
  }

  it('kill -9 during backfill and during incremental sync loses and duplicates nothing', async () => {
    h = await startSyncHarness(dialect);
    await h.upstream.createModule('big');
    await h.upstream.createTable('big', 'history', { hasHistory: true }, FIELDS);
    await h.upstream.createTable('big', 'plain', { hasHistory: false }, FIELDS);
    const historyIds = await h.upstream.createRecords('big', 'history', rows(30_000));
    const plainIds = await h.upstream.createRecords('big', 'plain', rows(8_000));

    // Backfill, killed as soon as a run has committed rows of its own (watched through SQL, not
    // through the log, so a busy machine cannot make every kill land before or after the work).
    const partialCounts: number[] = [];
    let killed = 0;
    for (let i = 0; i < 3; i++) {
      const run = await killedWhenCommitted('history', await count('history'));
      if (run.signal === 'SIGKILL') killed++;
      else expect(run.code, run.stderr).toBe(0);
      partialCounts.push(await count('history'));
    }
    expect(killed).toBeGreaterThan(0);
    expect(partialCounts.some((n) => n > 0 && n < 30_000), String(partialCounts)).toBe(true);

    // Meanwhile upstream moves on.
    await h.upstream.updateRecords('big', 'history', historyIds.slice(0, 900).map((id) => ({ id, qty: -1, name: 'changed' })));
    await h.upstream.deleteRecords('big', 'history', historyIds.slice(29_000, 29_400));
    await h.upstream.deleteRecords('big', 'plain', plainIds.slice(0, 30));
    const done = await runWsmirror(['sync'], env());
    expect(done.code, done.stderr).toBe(0);
    await h.expectConverged('big', 'history');
    await h.expectConverged('big', 'plain');

    // Incremental: many upstream changes, the daemon killed while applying them.
    for (let i = 0; i < 6_000; i += 1000) {
      await h.upstream.updateRecords('big', 'history', historyIds.slice(i, i + 1000).map((id) => ({ id, qty: i })));
    }
    await h.upstream.deleteRecords('big', 'history', historyIds.slice(10_000, 10_500));
    await h.upstream.createRecords('big', 'history', rows(2_000, 100_000));
    await h.upstream.updateRecords('big', 'plain', plainIds.slice(100, 600).map((id) => ({ id, name: 'edited' })));
    let incrementalKills = 0;
    for (const delayMs of [20, 150, 400]) {
      const run = await killedRun('"table":"big.history","mode":"history"', 1, delayMs);
      if (run.signal === 'SIGKILL') incrementalKills++;
    }
    expect(incrementalKills).toBeGreaterThan(0);
    const final = await runWsmirror(['sync'], env());
    expect(final.code, final.stderr).toBe(0);
    await h.expectConverged('big', 'history');
    await h.expectConverged('big', 'plain');
  }, 240_000);
});
