import { afterEach, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.ts';
import { SyncEngine, type SyncOptions } from '../../src/sync/index.ts';
import { discardOutbox, listOutbox, retryOutbox } from '../../src/sync/push/outbox-admin.ts';
import { forEachDialect, questionMarkSql } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { mirrorEnv, runWsmirror } from '../helpers/processes.ts';
import { field } from '../helpers/schema.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';
import { upstreamWith } from '../helpers/upstream-overrides.ts';

/**
 * Edits that reference (or update) a row inserted here wait for that row's create
 * (docs/sync.md, "Pushing local edits"). The wait is no attempt of theirs, and once the row is
 * created they are due at once: they go out in the push that creates it. A reference set to the
 * temporary id after the create (an application kept the id `INSERT … RETURNING id` gave it)
 * goes upstream as the record the row became (docs/mirror.md, "Local edits: how they are captured").
 */

interface OutboxRow {
  entry_id: number | string;
  record_id: number | string;
  operation: string;
  status: string;
  attempts: number | string;
  last_error: string | null;
  next_attempt_at: unknown;
}

/**
 * Backoffs long enough that an entry not made due by the push is still waiting when the test
 * runs the next cycle (full jitter: a delay below a second has odds of about 1 in 3,600).
 */
const LONG_BACKOFF: Partial<SyncOptions> = { lookbackMs: 0, pushRetryBaseMs: 3_600_000, pushRetryMaxMs: 3_600_000 };

forEachDialect('push: edits waiting for a local row', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  async function outbox(): Promise<OutboxRow[]> {
    return h.tm.sql<OutboxRow>(`SELECT entry_id, record_id, operation, status, attempts, last_error, next_attempt_at FROM ${h.tm.table('_wsmirror_outbox')} ORDER BY entry_id`);
  }

  async function statusJson(): Promise<{ outbox: Record<string, number> }> {
    return JSON.parse((await runWsmirror(['status', '--json'], mirrorEnv(h.tm))).stdout) as { outbox: Record<string, number> };
  }

  async function sqlName(table: string): Promise<string> {
    return h.tm.table((await catalogEntry(h.tm, 'crm', table))!.sqlName);
  }

  /**
   * crm.companies and crm.deals (`company` references companies), one deal upstream, synced.
   * Returns the deal's id, the SQL tables, and `sql` on a connection of its own.
   */
  async function companiesAndDeals(): Promise<{ deal: number; companies: string; deals: string; sql: ReturnType<typeof questionMarkSql> }> {
    h = await startSyncHarness(dialect, LONG_BACKOFF);
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'companies', { hasHistory: true }, [
      field('name', 'string'), field('stage', 'choice', { options: [{ name: 'lead' }, { name: 'client' }] }),
    ]);
    await h.upstream.createTable('crm', 'deals', { hasHistory: true }, [field('title', 'string'), field('company', 'reference', { refTableName: 'companies' })]);
    const [deal] = await h.upstream.createRecords('crm', 'deals', [{ title: 'old' }]);
    await h.sync();
    return { deal: Number(deal), companies: await sqlName('companies'), deals: await sqlName('deals'), sql: questionMarkSql(h.tm) };
  }

  /**
   * The set-up of `companiesAndDeals`; then, in SQL, a company inserted here, a deal inserted here
   * pointing at it, and the upstream deal updated to point at it. Returns the local company's
   * temporary id and the upstream deal's id.
   */
  async function localCompanyAndItsDeals(companyStage: string | null): Promise<{ company: number; deal: number }> {
    const { deal, companies, deals, sql } = await companiesAndDeals();
    await sql(`INSERT INTO ${companies} (name, stage) VALUES (?, ?)`, ['Acme', companyStage]);
    const [company] = await sql<{ id: number | string }>(`SELECT id FROM ${companies} WHERE name = ?`, ['Acme']);
    await sql(`INSERT INTO ${deals} (title, company) VALUES (?, ?)`, ['new', Number(company!.id)]);
    await sql(`UPDATE ${deals} SET company = ? WHERE id = ?`, [Number(company!.id), deal]);
    return { company: Number(company!.id), deal };
  }

  /** Inserts a company as an application does, and returns the id it is told: the temporary one. */
  async function insertCompany(sql: ReturnType<typeof questionMarkSql>, companies: string, name: string): Promise<number> {
    if (dialect.dialect === 'postgres') {
      const [row] = await sql<{ id: number | string }>(`INSERT INTO ${companies} (name) VALUES (?) RETURNING id`, [name]);
      return Number(row!.id);
    }
    // SQLite's RETURNING reports the id before the capture trigger gave the temporary one (docs/mirror.md).
    await sql(`INSERT INTO ${companies} (name) VALUES (?)`, [name]);
    const outbox = h.tm.table('_wsmirror_outbox');
    const [row] = await sql<{ record_id: number | string }>(`SELECT record_id FROM ${outbox} WHERE entry_id = (SELECT max(entry_id) FROM ${outbox} WHERE operation = 'insert' AND sql_table = ?)`,
      [(await catalogEntry(h.tm, 'crm', 'companies'))!.sqlName]);
    return Number(row!.record_id);
  }

  /** Upstream's deals as title → company name (null for none). */
  async function upstreamDeals(): Promise<Record<string, unknown>> {
    const names = new Map((await h.upstream.allRecords('crm', 'companies')).map((r) => [Number(r.id), r.values.name]));
    return Object.fromEntries((await h.upstream.allRecords('crm', 'deals'))
      .map((r) => [r.values.title, r.values.company === null ? null : names.get(Number(r.values.company))]));
  }

  it('after the row\'s create backed off (503), the edits waiting for it go out in the push that creates it; the wait counts no attempt', async () => {
    const { company } = await localCompanyAndItsDeals(null);
    const unavailable = upstreamWith(h.client, {
      createRecords: (moduleName, tableName, records) => (tableName === 'companies'
        ? Promise.reject(new UpstreamError({ endpoint: 'createRecords', method: 'POST', path: '/records' }, 503, 'down for maintenance', { attempts: 1 }))
        : h.client.createRecords(moduleName, tableName, records)),
    });
    const engine = new SyncEngine({ client: unavailable, mirror: h.tm.mirror, options: LONG_BACKOFF });
    // A 503 is what every request would meet: the push ends there, the deals' edits not looked at.
    expect((await engine.runCycle()).push).toMatchObject({ error: expect.objectContaining({ message: expect.stringMatching(/503|maintenance/) }) });
    expect((await outbox()).slice(1).map((e) => Number(e.attempts))).toEqual([0, 0]);
    // The next push finds the company's create backing off: the deals' edits wait for it.
    await engine.runCycle();
    const [insert, ...waiting] = await outbox();
    expect([insert!.operation, insert!.status, Number(insert!.attempts)]).toEqual(['insert', 'pending', 1]);
    expect(waiting.map((e) => [e.operation, e.status, Number(e.attempts)])).toEqual([['insert', 'pending', 0], ['update', 'pending', 0]]);
    for (const e of waiting) {
      expect(e.last_error).toMatch(new RegExp(`references row ${company} of crm\\.companies, inserted here and not created upstream yet`));
      // Due when the row they wait for is tried again, not on a schedule of their own.
      expect(new Date(String(e.next_attempt_at)).getTime()).toBe(new Date(String(insert!.next_attempt_at)).getTime());
    }
    expect(await upstreamDeals()).toEqual({ old: null });
    // `wsmirror status` tells the two waiting edits from the create backing off.
    expect((await statusJson()).outbox).toEqual({ pending: 3, failed: 0, conflict: 0, waiting: 2 });

    // The company's backoff is over (the deals' would have been later, on a schedule of their own).
    await h.tm.sql(`UPDATE ${h.tm.table('_wsmirror_outbox')} SET next_attempt_at = NULL WHERE entry_id = ${Number(insert!.entry_id)}`);
    await h.sync();
    expect(await outbox()).toEqual([]);
    expect(await upstreamDeals()).toEqual({ old: 'Acme', new: 'Acme' });
    await h.expectConverged('crm', 'deals');
  });

  it('after the row\'s create was refused (400), fixed and retried, the edits waiting for it go out in the push that creates it', async () => {
    const { company } = await localCompanyAndItsDeals('no-such-option');
    await h.sync();
    const [insert, ...waiting] = await outbox();
    expect([insert!.status, insert!.last_error]).toEqual(['failed', expect.stringMatching(/stage/)]);
    expect(waiting.map((e) => [e.status, Number(e.attempts), e.next_attempt_at !== null])).toEqual([['pending', 0, true], ['pending', 0, true]]);
    for (const e of waiting) expect(e.last_error).toMatch(new RegExp(`references row ${company} of crm\\.companies`));

    // Fixed in SQL, and the insert retried (`wsmirror outbox retry`).
    const sql = questionMarkSql(h.tm);
    const lead = ((await h.upstream.getTable('crm', 'companies')).fields as { name: string; options?: { id: string; name: string }[] }[])
      .find((f) => f.name === 'stage')!.options!.find((o) => o.name === 'lead')!.id;
    await sql(`UPDATE ${await sqlName('companies')} SET stage = ? WHERE id = ?`, [lead, company]);
    await retryOutbox(h.tm.mirror, { entryIds: [Number(insert!.entry_id)] });
    await h.sync();
    expect(await outbox()).toEqual([]);
    expect(await upstreamDeals()).toEqual({ old: 'Acme', new: 'Acme' });
    await h.expectConverged('crm', 'companies');
    await h.expectConverged('crm', 'deals');
  });

  it('edits referencing a row whose insert was discarded, or a negative id typed in, fail naming it instead of waiting for ever', async () => {
    const { company } = await localCompanyAndItsDeals('no-such-option');
    await h.sync();
    const [insert] = await outbox();
    expect(insert!.status).toBe('failed');
    await discardOutbox(h.tm.mirror, h.client, { entryIds: [Number(insert!.entry_id)] });
    // A reference to a row that never was one of this mirror's inserts.
    const sql = questionMarkSql(h.tm);
    await sql(`INSERT INTO ${await sqlName('deals')} (title, company) VALUES (?, ?)`, ['typed', -424242]);
    // Neither row will be created: nothing waits for it, though the push has not failed them yet.
    expect((await statusJson()).outbox).toEqual({ pending: 3, failed: 0, conflict: 0, waiting: 0 });
    await h.sync();
    const left = await outbox();
    const referencing = left.filter((e) => e.operation !== 'insert' || Number(e.record_id) !== company);
    expect(referencing.map((e) => e.status)).toEqual(['failed', 'failed', 'failed']);
    for (const e of referencing.slice(0, 2)) expect(e.last_error).toMatch(new RegExp(`references row ${company} of crm\\.companies, which the mirror will not create upstream`));
    expect(referencing[2]!.last_error).toMatch(/references row -424242 of crm\.companies, which the mirror will not create upstream/);
    expect(referencing[2]!.last_error).toMatch(/set the reference to a record upstream has, or to NULL, then wsmirror outbox retry/);
    expect(await upstreamDeals()).toEqual({ old: null });
  });

  it('an insert referencing a row deleted here before it was created upstream fails saying so', async () => {
    const { deals, companies, sql } = await companiesAndDeals();
    const company = await insertCompany(sql, companies, 'Gone');
    await sql(`INSERT INTO ${deals} (title, company) VALUES (?, ?)`, ['orphan', company]);
    await sql(`DELETE FROM ${companies} WHERE id = ?`, [company]);
    await h.sync();
    const [insert] = await outbox();
    expect(insert).toMatchObject({ operation: 'insert', status: 'failed' });
    expect(insert!.last_error).toMatch(new RegExp(`^references row ${company} of crm\\.companies, which was deleted here before it was created upstream: `
      + 'set the reference to a record upstream has, or to NULL, then wsmirror outbox retry$'));
    expect(await upstreamDeals()).toEqual({ old: null });
  });

  it('a reference set to the temporary id after the push goes upstream as the record it became; _wsmirror_created names that record', async () => {
    const { deal, companies, deals, sql } = await companiesAndDeals();
    const temp = await insertCompany(sql, companies, 'Acme');
    expect(temp).toBeLessThan(0);
    await h.sync();
    const [acme] = (await h.upstream.allRecords('crm', 'companies')).filter((r) => r.values.name === 'Acme');
    const created = Number(acme!.id);

    // The application goes on with the id it was told: a new deal, and the old deal, point at it.
    await sql(`INSERT INTO ${deals} (title, company) VALUES (?, ?)`, ['later', temp]);
    await sql(`UPDATE ${deals} SET company = ? WHERE id = ?`, [temp, deal]);
    await h.sync();
    expect(await outbox()).toEqual([]);
    expect(await upstreamDeals()).toEqual({ old: 'Acme', later: 'Acme' });
    // The rows hold the upstream id too, as upstream does.
    expect((await sql<{ company: number | string }>(`SELECT company FROM ${deals} ORDER BY title`)).map((r) => Number(r.company))).toEqual([created, created]);
    await h.expectConverged('crm', 'deals');

    // An UPDATE by the temporary id finds no row; the application reads the upstream id instead.
    await sql(`UPDATE ${companies} SET name = ? WHERE id = ?`, ['Acme Ltd', temp]);
    expect(await outbox()).toEqual([]);
    const [known] = await sql<{ table_id: string; created_id: number | string }>(
      `SELECT table_id, created_id FROM ${h.tm.table('_wsmirror_created')} WHERE temp_id = ?`, [temp]);
    expect(Number(known!.created_id)).toBe(created);
    expect(known!.table_id).toBe((await catalogEntry(h.tm, 'crm', 'companies'))!.tableId);
  });

  it('a reference the push cannot point at the record its temporary id became fails naming that record', async () => {
    const { companies, deals, sql } = await companiesAndDeals();
    const temp = await insertCompany(sql, companies, 'Acme');
    await sql(`INSERT INTO ${deals} (title, company) VALUES (?, ?)`, ['new', temp]);
    // Deals leave the selection before the company is created: the deal's values are kept in its
    // insert entry, where the company's create does not reach the reference.
    const narrowed = new SyncEngine({ client: h.client, mirror: h.tm.mirror, options: { lookbackMs: 0, tables: { include: ['crm.companies'] } } });
    await narrowed.runCycle({ forceFullScan: true });
    const [acme] = await h.upstream.allRecords('crm', 'companies');
    const created = Number(acme!.id);
    const [kept] = await listOutbox(h.tm.mirror, {});
    expect(kept).toMatchObject({ operation: 'insert', newValue: { title: 'new', company: temp } });

    // Back in the selection, and retried.
    await h.sync();
    await retryOutbox(h.tm.mirror, { entryIds: [kept!.entryId] });
    await h.sync();
    const [failed] = await outbox();
    expect(failed!.status).toBe('failed');
    expect(failed!.last_error).toBe(`references row ${temp} of crm.companies, which was created upstream as record ${created}: `
      + `set the reference to ${created}, then wsmirror outbox retry`);
    expect(await upstreamDeals()).toEqual({ old: null });
  });
});

