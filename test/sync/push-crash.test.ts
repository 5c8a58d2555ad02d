import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { startHoldingProxy, type HoldingProxy } from '../helpers/holding-proxy.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { daemonEnv, runWsmirror, type RunResult } from '../helpers/processes.ts';
import { field } from '../helpers/schema.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * Exactly once (docs/sync.md): a real `wsmirror sync` process is SIGKILLed after upstream applied
 * a push batch and before the answer reached it — the proxy holds the answer back — once for
 * creates, once for updates, once for deletes. After a clean restart every edit is applied
 * upstream exactly once and the outbox is empty.
 */
forEachDialect('push: kill -9 between send and acknowledgement', (dialect) => {
  let h: SyncHarness;
  let proxy: HoldingProxy;
  afterEach(async () => {
    await proxy?.close();
    await h?.close();
  });

  /**
   * No lookback, and a short settle: the creates a killed process sent are looked up by the
   * first run once their send is 2 s old, not before (their request might still be on its way).
   */
  const SETTLE_MS = 2_000;
  const ENV = { WSMIRROR_SYNC_LOOKBACK: '0', WSMIRROR_SYNC_CREATE_SETTLE: `${SETTLE_MS / 1000}s` };

  function run(): Promise<RunResult> {
    return runWsmirror(['sync'], daemonEnv({ ...h.emu, url: proxy.url }, h.tm, ENV));
  }

  /** Runs `wsmirror sync`, holds the first `method` request to the records endpoint, kills the process once upstream applied it. */
  async function killedAfter(method: string): Promise<void> {
    const held = proxy.holdNext((m, path) => m === method && /\/records(\?|$)/.test(path));
    let kill: () => void = () => undefined;
    const done = runWsmirror(['sync'], daemonEnv({ ...h.emu, url: proxy.url }, h.tm, ENV), {
      onSpawn: (k) => {
        kill = k;
      },
    });
    const info = await Promise.race([held, done.then((r) => ({ exited: r }))]);
    expect(info, `the ${method} batch was sent and applied`).toMatchObject({ method, status: expect.toSatisfy((s: number) => s >= 200 && s < 300) });
    kill();
    expect((await done).signal).toBe('SIGKILL');
  }

  for (const hasHistory of [true, false]) {
    it(`applies creates, updates and deletes exactly once (history ${hasHistory})`, async () => {
      h = await startSyncHarness(dialect, { lookbackMs: 0 });
      proxy = await startHoldingProxy(h.emu.url);
      await h.upstream.createModule('crm');
      await h.upstream.createTable('crm', 'people', { hasHistory }, [field('name', 'string'), field('age', 'number')]);
      const ids = await h.upstream.createRecords('crm', 'people', [{ name: 'a', age: 1 }, { name: 'b', age: 2 }, { name: 'c', age: 3 }]);
      const first = await run();
      expect(first.code, first.stderr).toBe(0);
      const entry = await catalogEntry(h.tm, 'crm', 'people');
      const table = h.tm.table(entry!.sqlName);
      const ph = (n: number) => (dialect.dialect === 'postgres' ? `$${n}` : '?');

      // Two identical new rows and a third, sent in one POST that is applied and never answered.
      for (const [name, age] of [['twin', 7], ['twin', 7], ['solo', 8]] as const) {
        await h.tm.sql(`INSERT INTO ${table} (name, age) VALUES (${ph(1)}, ${ph(2)})`, [name, age]);
      }
      await killedAfter('POST');
      const settled = Date.now() + SETTLE_MS;
      await h.tm.sql(`UPDATE ${table} SET age = age + 100 WHERE id > 0`);
      await killedAfter('PATCH');
      await h.tm.sql(`DELETE FROM ${table} WHERE id = ${ph(1)}`, [Number(ids[2])]);
      await killedAfter('DELETE');

      // Until then, the creates are neither looked up nor sent again.
      expect((await h.upstream.allRecords('crm', 'people')).filter((r) => r.values.name === 'twin')).toHaveLength(2);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, settled - Date.now())));
      const last = await run();
      expect(last.code, last.stderr).toBe(0);
      const upstream = await h.upstream.allRecords('crm', 'people');
      expect(upstream.map((r) => r.values).sort((x, y) => String(x.name).localeCompare(String(y.name)))).toEqual([
        { name: 'a', age: 101 }, { name: 'b', age: 102 }, { name: 'solo', age: 8 }, { name: 'twin', age: 7 }, { name: 'twin', age: 7 },
      ]);
      expect(await h.tm.sql(`SELECT * FROM ${h.tm.table('_wsmirror_outbox')}`)).toEqual([]);
      await h.expectConverged('crm', 'people');
    }, 120_000);
  }
});
