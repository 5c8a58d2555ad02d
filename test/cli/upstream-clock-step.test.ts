import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { daemonEnv, startWsmirror, type LiveWsmirror } from '../helpers/processes.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * `wsmirror run` as a real process while the upstream's clock steps forward for good (an NTP
 * correction of a clock that was behind): the first answers on the new clock are refused, the
 * cursor stays, and once a later answer continues the new clock the daemon goes on from there.
 */
forEachDialect('wsmirror run: the upstream clock steps forward', (dialect) => {
  let h: SyncHarness;
  let daemon: LiveWsmirror | undefined;
  afterEach(async () => {
    daemon?.child.kill('SIGKILL');
    await daemon?.exited;
    daemon = undefined;
    await h?.close();
  });

  async function count(): Promise<number> {
    const entry = await catalogEntry(h.tm, 'shop', 'items');
    if (!entry) return 0;
    const [row] = await h.tm.sql<{ n: number | string }>(`SELECT count(*) AS n FROM ${h.tm.table(entry.sqlName)}`);
    return Number(row!.n);
  }

  async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    for (const started = Date.now(); !(await check()) && Date.now() - started < timeoutMs;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('mirrors changes made after a 3-minute forward step of the upstream clock within a few cycles', async () => {
    h = await startSyncHarness(dialect);
    // Behind this machine's clock by 3 minutes, then stepped to it: both sides of the step are
    // within the 5-minute bound against this machine's clock, so only the jump itself is at stake.
    await h.upstream.setClock({ now: new Date(Date.now() - 3 * 60_000).toISOString() });
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'items', { hasHistory: true }, [{ name: 'qty', type: 'number', labels: { '': 'Qty' } }]);
    await h.upstream.createRecords('shop', 'items', [{ qty: 1 }]);

    daemon = startWsmirror(['run'], daemonEnv(h.emu, h.tm, { WSMIRROR_SCHEDULE: '1s', WSMIRROR_LOG_LEVEL: 'info' }), { killAfterMs: 90_000 });
    await daemon.waitFor('the first cycle', (stdout) => /"msg":"cycle done/.test(stdout));
    await until(async () => (await count()) === 1, 10_000);
    expect(await count()).toBe(1);
    // A few cycles on the old clock, so each feed has a last answer to hold the next against.
    const cyclesDone = () => daemon!.output().stdout.split('"msg":"cycle done').length - 1;
    const before = cyclesDone();
    await until(async () => cyclesDone() >= before + 2, 10_000);

    await h.upstream.setClock({ now: new Date().toISOString() });
    await h.upstream.createRecords('shop', 'items', [{ qty: 2 }]);
    // One cycle refuses the schema feed's first answer on the new clock, the next confirms it and
    // refuses the table's first, the one after confirms that: at a cycle a second, well within 15 s.
    await until(async () => (await count()) === 2, 15_000);
    const { stdout, stderr } = daemon.output();
    expect(await count(), `${stdout}\n${stderr}`).toBe(2);
    expect(stdout).toContain('jumped ahead');

    daemon.child.kill('SIGTERM');
    const result = await daemon.exited;
    daemon = undefined;
    expect(result.code, result.stderr).toBe(0);
  }, 60_000);
});
