import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';
import { within } from '../helpers/within.ts';

const label = (text: string) => ({ '': text });

/** crm.companies (name, industry) and crm.deals (referencing companies), one record each, synced. */
async function companiesAndDeals(h: SyncHarness): Promise<void> {
  await h.upstream.createModule('crm');
  await h.upstream.createTable('crm', 'companies', { hasHistory: true }, [
    { name: 'name', type: 'string', labels: label('Name') }, { name: 'industry', type: 'string', labels: label('Industry') },
  ]);
  await h.upstream.createTable('crm', 'deals', { hasHistory: true }, [
    { name: 'title', type: 'string', labels: label('Title') },
    { name: 'company', type: 'reference', labels: label('Company'), refTableName: 'companies' },
  ]);
  const [company] = await h.upstream.createRecords('crm', 'companies', [{ name: 'Acme', industry: 'tools' }]);
  await h.upstream.createRecords('crm', 'deals', [{ title: 'big', company: Number(company) }]);
  await h.sync();
}

async function relation(h: SyncHarness, table: string, view: boolean): Promise<string> {
  const { sqlName } = (await catalogEntry(h.tm, 'crm', table))!;
  return h.tm.table(view ? `${sqlName}_v` : sqlName);
}

async function connect(h: SyncHarness, applicationName: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: h.tm.url, application_name: applicationName });
  await client.connect();
  return client;
}

async function until(what: string, condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A cycle whose schema change runs while a BI query `query` (of a view of the user's reading
 * `read`, or of a join reading `read` second) arrives, in the order that deadlocked: the schema
 * change waits for its lock on `read` (another session holds it), the query locks what it reads
 * first and queues for `read` behind the change, the other session ends, the change gets `read`
 * and goes on to its other locks and its DDL. The query's result (or error) and the cycle's report.
 */
async function cycleUnderQuery(h: SyncHarness, read: string, query: string) {
  const holder = await connect(h, 'holder');
  const bi = await connect(h, 'bi-dashboard');
  try {
    const pidOf = async (c: pg.Client) => (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const [holderPid, biPid] = [await pidOf(holder), await pidOf(bi)];
    const waiting = async (sql: string, params: unknown[]) => (await h.tm.sql<{ n: number }>(sql, params))[0]!.n > 0;
    await holder.query('BEGIN');
    await holder.query(`LOCK TABLE ${read} IN ACCESS EXCLUSIVE MODE`);
    let ended = false;
    const cycle = h.engine.runCycle().finally(() => { ended = true; });
    await until('the schema change waiting for its lock', async () => ended
      || waiting('SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = $1::regclass AND pid <> $2', [read, holderPid]));
    const result = bi.query<{ n: number }>(query).then((r) => r.rows[0]!.n, (error: Error) => error);
    await until('the query waiting', () => waiting('SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND pid = $1', [biPid]));
    await holder.query('ROLLBACK');
    return { query: await within(30_000, 'the query', result), report: await within(30_000, 'the cycle', cycle) };
  } finally {
    await holder.end();
    await bi.end();
  }
}

const failedTables = (report: Awaited<ReturnType<SyncHarness['engine']['runCycle']>>) => report.tables.filter((t) => t.action === 'failed');

forEachDialect('pull: a schema change under queries of users\' views', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  for (const on of ['readable view', 'table'] as const) {
    it.runIf(dialect.dialect === 'postgres')(`a change refused for a user's view on the ${on} fails no query of that view (no deadlock)`, async () => {
      h = await startSyncHarness(dialect, { lookbackMs: 0 });
      await companiesAndDeals(h);
      const read = await relation(h, 'companies', on === 'readable view');
      const report = h.tm.table('my_report');
      await h.tm.sql(`CREATE VIEW ${report} AS SELECT "name", "industry" FROM ${read}`);
      await h.upstream.deleteField('crm', 'companies', 'industry');

      const outcome = await cycleUnderQuery(h, read, `SELECT count(*)::int AS n FROM ${report}`);
      expect(outcome.query).toBe(1);
      const failed = failedTables(outcome.report);
      expect(failed.map((t) => [t.table, t.error!.code])).toEqual([['crm.companies', 'MIRROR']]);
      expect(failed[0]!.error!.message).toContain('my_report');
      expect(failed[0]!.error!.message).toMatch(/drop that object of yours/);
      expect(failed[0]!.error!.message).not.toMatch(/deadlock/);
      expect(failed[0]!.error!.message).toMatch(on === 'table' ? /view \S+\.my_report depends on column industry of table / : /view \S+\.my_report depends on view \S+_v\b/);

      await h.tm.sql(`DROP VIEW ${report}`);
      expect(failedTables(await h.engine.runCycle())).toEqual([]);
      await h.expectConverged('crm', 'companies');
    }, 90_000);
  }

  it.runIf(dialect.dialect === 'postgres')('changes applied under queries of users\' views on a changed table\'s view and on a referencing table\'s view fail none of them', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await companiesAndDeals(h);
    const companies = await relation(h, 'companies', true);
    const deals = await relation(h, 'deals', true);
    const mine = h.tm.table('my_companies');
    const theirs = h.tm.table('my_deals');
    await h.tm.sql(`CREATE VIEW ${mine} AS SELECT "name" FROM ${companies}`);
    await h.tm.sql(`CREATE VIEW ${theirs} AS SELECT "title", "company_label" FROM ${deals}`);

    // A field added and one the user's view does not read deleted: companies' view is made again (in place, or dropped and created).
    await h.upstream.addFields('crm', 'companies', [{ name: 'city', type: 'string', labels: label('City') }]);
    let outcome = await cycleUnderQuery(h, companies, `SELECT count(*)::int AS n FROM ${mine}`);
    expect(outcome.query).toBe(1);
    expect(failedTables(outcome.report)).toEqual([]);

    // companies' change makes deals' view again in place (the user's view on companies' own goes:
    // Postgres cannot make a view lose a column in place, and it would stand in the change's way).
    await h.tm.sql(`DROP VIEW ${mine}`);
    await h.upstream.deleteField('crm', 'companies', 'city');
    outcome = await cycleUnderQuery(h, deals, `SELECT count(*)::int AS n FROM ${theirs}`);
    expect(outcome.query).toBe(1);
    expect(failedTables(outcome.report)).toEqual([]);
    await h.expectConverged('crm', 'companies');
    expect(await h.tm.sql(`SELECT * FROM ${theirs}`)).toEqual([{ title: 'big', company_label: 'Acme' }]);
  }, 90_000);

  it.runIf(dialect.dialect === 'postgres')('a change applied under a query joining two readable views, in another order than the change locks them, fails neither', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await companiesAndDeals(h);
    const companies = await relation(h, 'companies', true);
    const deals = await relation(h, 'deals', true);
    // companies' change locks its view, then deals' (which shows a company's name); the query reads deals' first.
    await h.upstream.addFields('crm', 'companies', [{ name: 'city', type: 'string', labels: label('City') }]);
    const outcome = await cycleUnderQuery(h, companies,
      `SELECT count(*)::int AS n FROM ${deals} AS d JOIN ${companies} AS c ON c."id" = d."company"`);
    expect(outcome.query).toBe(1);
    expect(failedTables(outcome.report)).toEqual([]);
    await h.expectConverged('crm', 'companies');
  }, 90_000);
});
