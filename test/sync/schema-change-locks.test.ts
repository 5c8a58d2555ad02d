import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';
import { within } from '../helpers/within.ts';

const label = (text: string) => ({ '': text });

/** crm.companies, crm.contacts (referencing companies) and crm.deals, one record each, synced. */
async function threeTables(h: SyncHarness): Promise<void> {
  await h.upstream.createModule('crm');
  await h.upstream.createTable('crm', 'companies', { hasHistory: true }, [{ name: 'name', type: 'string', labels: label('Name') }]);
  await h.upstream.createTable('crm', 'contacts', { hasHistory: true }, [
    { name: 'full_name', type: 'string', labels: label('Name') },
    { name: 'company', type: 'reference', labels: label('Company'), refTableName: 'companies' },
  ]);
  await h.upstream.createTable('crm', 'deals', { hasHistory: true }, [{ name: 'title', type: 'string', labels: label('Title') }]);
  const [company] = await h.upstream.createRecords('crm', 'companies', [{ name: 'Acme' }]);
  await h.upstream.createRecords('crm', 'contacts', [{ full_name: 'Ada', company: Number(company) }]);
  await h.upstream.createRecords('crm', 'deals', [{ title: 'big' }]);
  await h.sync();
}

async function sqlName(h: SyncHarness, table: string): Promise<string> {
  return (await catalogEntry(h.tm, 'crm', table))!.sqlName;
}

forEachDialect('pull: a schema change while a reader holds a table', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  it.runIf(dialect.dialect === 'postgres')('waits a bounded time for the locks, holds back the tables a long reader holds (naming it), applies the others, and applies them once it ends', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await threeTables(h);
    const contacts = h.tm.table(await sqlName(h, 'contacts'));
    const contactsView = h.tm.table(`${await sqlName(h, 'contacts')}_v`);
    const connect = async (applicationName: string) => {
      const client = new pg.Client({ connectionString: h.tm.url, application_name: applicationName });
      await client.connect();
      return client;
    };
    // A BI user's transaction that read contacts and stays open: it holds the table's
    // ACCESS SHARE lock until it ends, which every ALTER of the table waits for.
    const bi = await connect('bi-notebook');
    const dashboard = await connect('bi-dashboard');
    try {
      const biPid = (await bi.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await bi.query('BEGIN');
      await bi.query(`SELECT count(*) FROM ${contacts}`);

      await h.upstream.addFields('crm', 'contacts', [{ name: 'email', type: 'string', labels: label('E-mail') }]);
      await h.upstream.addFields('crm', 'companies', [{ name: 'city', type: 'string', labels: label('City') }]);
      await h.upstream.addFields('crm', 'deals', [{ name: 'stage', type: 'string', labels: label('Stage') }]);
      await h.upstream.createRecords('crm', 'deals', [{ title: 'small', stage: 'won' }]);
      const started = Date.now();
      const cycle = h.engine.runCycle();
      // A dashboard's query of the table arriving meanwhile waits behind the schema change's lock
      // request at most as long as that waits, not as long as the BI transaction lasts.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const read = await within(15_000, 'a dashboard query of contacts', dashboard.query(`SELECT count(*)::int AS n FROM ${contactsView}`));
      expect(read.rows[0]!.n).toBe(1);
      const report = await within(30_000, 'the cycle', cycle);
      expect(Date.now() - started).toBeLessThan(30_000);

      // contacts is held by the BI transaction; companies' change makes the view of contacts
      // (which shows a company's name) again, so it needs contacts too. deals goes on.
      const failed = report.tables.filter((t) => t.action === 'failed');
      expect(failed.map((t) => t.table).sort()).toEqual(['crm.companies', 'crm.contacts']);
      for (const t of failed) {
        expect(t.error!.code).toBe('MIRROR_LOCKED');
        expect(t.error!.message).toContain(`pid ${biPid}`);
        expect(t.error!.message).toContain('bi-notebook');
        expect(t.error!.message).toContain(await sqlName(h, 'contacts'));
        expect(t.error!.message).toMatch(/tried again at every cycle/);
        // The session's query text may hold data: it is never copied into the mirror.
        expect(t.error!.message).not.toContain('count(*)');
      }
      expect(failed.find((t) => t.table === 'crm.contacts')!.error!.message).toMatch(/schema change of table crm\.contacts is held back/);
      await h.expectConverged('crm', 'deals');
      const [state] = await h.tm.sql<{ code: string }>(
        `SELECT last_error_code AS code FROM ${h.tm.table('_wsmirror_tables')} WHERE sql_name = $1`, [await sqlName(h, 'contacts')]);
      expect(state!.code).toBe('MIRROR_LOCKED');

      // Still held: the next cycle waits as boundedly and holds it back again.
      const again = await within(30_000, 'the second cycle', h.engine.runCycle());
      expect(again.tables.find((t) => t.table === 'crm.contacts')).toMatchObject({ action: 'failed', error: { code: 'MIRROR_LOCKED' } });

      await bi.query('COMMIT');
      expect((await within(30_000, 'the cycle after the lock ends', h.engine.runCycle())).ok).toBe(true);
      await h.expectConverged('crm', 'contacts');
      await h.expectConverged('crm', 'companies');
    } finally {
      await bi.query('ROLLBACK').catch(() => {});
      await bi.end();
      await dashboard.end();
    }
  }, 120_000);

  it.runIf(dialect.dialect === 'postgres')('a long query of the readable view holds back the table as one of the table does', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await threeTables(h);
    const view = h.tm.table(`${await sqlName(h, 'deals')}_v`);
    const bi = new pg.Client({ connectionString: h.tm.url, application_name: 'bi-report' });
    await bi.connect();
    try {
      await bi.query('BEGIN');
      await bi.query(`SELECT count(*) FROM ${view}`);
      await h.upstream.addFields('crm', 'deals', [{ name: 'stage', type: 'string', labels: label('Stage') }]);
      await h.upstream.addFields('crm', 'contacts', [{ name: 'email', type: 'string', labels: label('E-mail') }]);
      const report = await within(30_000, 'the cycle', h.engine.runCycle());
      expect(report.tables.filter((t) => t.action === 'failed').map((t) => [t.table, t.error!.code])).toEqual([['crm.deals', 'MIRROR_LOCKED']]);
      expect(report.tables.find((t) => t.table === 'crm.deals')!.error!.message).toContain('bi-report');
      await h.expectConverged('crm', 'contacts');
      await bi.query('COMMIT');
      expect((await within(30_000, 'the cycle after the lock ends', h.engine.runCycle())).ok).toBe(true);
      await h.expectConverged('crm', 'deals');
    } finally {
      await bi.query('ROLLBACK').catch(() => {});
      await bi.end();
    }
  }, 120_000);

  it.runIf(dialect.dialect === 'sqlite')('a reader holding a read transaction open does not stop a schema change (WAL)', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await threeTables(h);
    const reader = new Database(h.tm.url.slice('sqlite:'.length), { readonly: true });
    try {
      reader.exec('BEGIN');
      reader.prepare(`SELECT count(*) FROM ${h.tm.table(`${await sqlName(h, 'contacts')}_v`)}`).get();
      await h.upstream.addFields('crm', 'contacts', [{ name: 'email', type: 'string', labels: label('E-mail') }]);
      expect((await within(30_000, 'the cycle', h.engine.runCycle())).ok).toBe(true);
      await h.expectConverged('crm', 'contacts');
      reader.exec('COMMIT');
    } finally {
      reader.close();
    }
  }, 60_000);
});
