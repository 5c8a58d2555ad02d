import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';
import { within } from '../helpers/within.ts';

const label = (text: string) => ({ '': text });

forEachDialect('pull: an application transaction holding a row lock', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  it.runIf(dialect.dialect === 'postgres')('waits a bounded time, fails that table naming the session, syncs the others, and loses nothing once it ends', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await h.upstream.createModule('app');
    await h.upstream.createTable('app', 'customers', { hasHistory: true }, [
      { name: 'name', type: 'string', labels: label('Name') },
      { name: 'email', type: 'string', labels: label('E-mail') },
    ]);
    await h.upstream.createTable('app', 'orders', { hasHistory: true }, [{ name: 'title', type: 'string', labels: label('Title') }]);
    const [customer] = await h.upstream.createRecords('app', 'customers', [{ name: 'Ada', email: 'ada@example.com' }]);
    await h.upstream.createRecords('app', 'orders', [{ title: 'first' }]);
    await h.sync();
    const customers = h.tm.table((await catalogEntry(h.tm, 'app', 'customers'))!.sqlName);

    const app = new pg.Client({ connectionString: h.tm.url, application_name: 'billing-app' });
    await app.connect();
    try {
      const appPid = (await app.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await app.query('BEGIN');
      await app.query(`UPDATE ${customers} SET email = 'held@example.com' WHERE id = ${Number(customer)}`);

      await h.upstream.updateRecords('app', 'customers', [{ id: customer!, name: 'Ada Lovelace' }]);
      await h.upstream.createRecords('app', 'orders', [{ title: 'second' }]);
      const started = Date.now();
      const report = await within(40_000, 'the cycle', h.engine.runCycle());
      expect(Date.now() - started).toBeLessThan(30_000);

      const failed = report.tables.filter((t) => t.action === 'failed');
      expect(failed.map((t) => t.table)).toEqual(['app.customers']);
      const message = failed[0]!.error!.message;
      expect(failed[0]!.error!.code).toBe('MIRROR_LOCKED');
      expect(message).toContain(`pid ${appPid}`);
      expect(message).toContain('billing-app');
      expect(message).toMatch(/tried again at every cycle/);
      // The session's query text may hold data: it is never copied into the mirror.
      expect(message).not.toContain('held@example.com');
      await h.expectConverged('app', 'orders');
      const [state] = await h.tm.sql<{ code: string }>(
        `SELECT last_error_code AS code FROM ${h.tm.table('_wsmirror_tables')} WHERE sql_name = $1`,
        [(await catalogEntry(h.tm, 'app', 'customers'))!.sqlName]);
      expect(state!.code).toBe('MIRROR_LOCKED');

      await app.query('COMMIT');
      // The local edit that held the lock is pushed, and upstream's change arrives.
      await within(40_000, 'the cycle after the lock ends', h.sync());
      expect((await within(40_000, 'the next cycle', h.sync())).ok).toBe(true);
      await h.expectConverged('app', 'customers');
      const [record] = (await h.upstream.allRecords('app', 'customers'));
      expect(record!.values).toMatchObject({ name: 'Ada Lovelace', email: 'held@example.com' });
    } finally {
      await app.query('ROLLBACK').catch(() => {});
      await app.end();
    }
  }, 180_000);
  it.runIf(dialect.dialect === 'postgres')('a push whose settling waits on a row lock fails boundedly, and the create binds to its record later, none twice', async () => {
    // A create whose answer could not be recorded is looked up once its send has settled
    // (sync.createSettle, a minute by default): none here, so that the next cycle binds it.
    h = await startSyncHarness(dialect, { lookbackMs: 0, createSettleMs: 0 });
    await h.upstream.createModule('app');
    await h.upstream.createTable('app', 'customers', { hasHistory: true }, [{ name: 'name', type: 'string', labels: label('Name') }]);
    await h.sync();
    const customers = h.tm.table((await catalogEntry(h.tm, 'app', 'customers'))!.sqlName);
    const app = new pg.Client({ connectionString: h.tm.url, application_name: 'billing-app' });
    await app.connect();
    try {
      await app.query(`INSERT INTO ${customers} (name) VALUES ('Grace')`);
      // The new row is locked by an open transaction: the push creates it upstream, and then
      // waits to give the row its upstream id.
      await app.query('BEGIN');
      await app.query(`UPDATE ${customers} SET name = 'Grace Hopper' WHERE id < 0`);
      const started = Date.now();
      const report = await within(40_000, 'the cycle', h.engine.runCycle());
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(report.push).toMatchObject({ error: { code: 'MIRROR_LOCKED', message: expect.stringContaining('billing-app') } });

      await app.query('COMMIT');
      await within(40_000, 'the cycle after the lock ends', h.sync());
      expect((await within(40_000, 'the next cycle', h.sync())).ok).toBe(true);
      expect((await h.upstream.allRecords('app', 'customers')).map((r) => r.values.name)).toEqual(['Grace Hopper']);
      await h.expectConverged('app', 'customers');
    } finally {
      await app.query('ROLLBACK').catch(() => {});
      await app.end();
    }
  }, 180_000);
});
