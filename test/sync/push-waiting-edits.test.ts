import { afterEach, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.ts';
import { SyncEngine, type SyncOptions } from '../../src/sync/index.ts';
import { discardOutbox, retryOutbox } from '../../src/sync/push/outbox-admin.ts';
import { forEachDialect, questionMarkSql } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { mirrorEnv, runWsmirror } from '../helpers/processes.ts';
import { field } from '../helpers/schema.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';
import { upstreamWith } from '../helpers/upstream-overrides.ts';

/**
 * Edits that reference (or update) a row inserted here wait for that row's create
 * (docs/sync.md, "Pushing local edits"). The wait is no attempt of theirs, and once the row is
 * created they are due at once: they go out in the push that creates it.
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
   * crm.companies and crm.deals (`company` references companies), one deal upstream; then, in
   * SQL, a company inserted here, a deal inserted here pointing at it, and the upstream deal
   * updated to point at it. Returns the local company's temporary id and the upstream deal's id.
   */
  async function localCompanyAndItsDeals(companyStage: string | null): Promise<{ company: number; deal: number }> {
    h = await startSyncHarness(dialect, LONG_BACKOFF);
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'companies', { hasHistory: true }, [
      field('name', 'string'), field('stage', 'choice', { options: [{ name: 'lead' }, { name: 'client' }] }),
    ]);
    await h.upstream.createTable('crm', 'deals', { hasHistory: true }, [field('title', 'string'), field('company', 'reference', { refTableName: 'companies' })]);
    const [deal] = await h.upstream.createRecords('crm', 'deals', [{ title: 'old' }]);
    await h.sync();
    const sql = questionMarkSql(h.tm);
    const companies = await sqlName('companies');
    const deals = await sqlName('deals');
    await sql(`INSERT INTO ${companies} (name, stage) VALUES (?, ?)`, ['Acme', companyStage]);
    const [company] = await sql<{ id: number | string }>(`SELECT id FROM ${companies} WHERE name = ?`, ['Acme']);
    await sql(`INSERT INTO ${deals} (title, company) VALUES (?, ?)`, ['new', Number(company!.id)]);
    await sql(`UPDATE ${deals} SET company = ? WHERE id = ?`, [Number(company!.id), Number(deal)]);
    return { company: Number(company!.id), deal: Number(deal) };
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
    await new SyncEngine({ client: unavailable, mirror: h.tm.mirror, options: LONG_BACKOFF }).runCycle();
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
});
