import { afterEach, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.ts';
import { SyncEngine, type SyncOptions } from '../../src/sync/index.ts';
import { forEachDialect, questionMarkSql } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { field } from '../helpers/schema.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';
import { upstreamWith } from '../helpers/upstream-overrides.ts';

/**
 * A record's local edits are one change (docs/sync.md, "Pushing local edits"): when some of its
 * entries are backing off after a failed send and new ones are captured, the push folds them
 * all, in capture order. Pushing only the due ones sent an older value after a newer one, and
 * sent the create of a row deleted here.
 */

/**
 * Backoffs long enough that an entry not folded with the new ones is still waiting when the test
 * goes on; no settle time, so a create whose send was cut off is looked up by the next cycle.
 */
const LONG_BACKOFF: Partial<SyncOptions> = { lookbackMs: 0, pushRetryBaseMs: 3_600_000, pushRetryMaxMs: 3_600_000, createSettleMs: 0 };

forEachDialect('push: a record\'s entries go together, whatever each one\'s backoff', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  /** crm.deals with one record upstream, mirrored. */
  async function deals(): Promise<{ table: string; deal: number }> {
    h = await startSyncHarness(dialect, LONG_BACKOFF);
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'deals', { hasHistory: true }, [field('title', 'string'), field('amount', 'number')]);
    const [deal] = await h.upstream.createRecords('crm', 'deals', [{ title: 'upstream', amount: 1 }]);
    await h.sync();
    return { table: h.tm.table((await catalogEntry(h.tm, 'crm', 'deals'))!.sqlName), deal: Number(deal) };
  }

  /** One cycle whose writes upstream (creates and updates) answer 503: the edits back off. */
  async function cycleWhileUpstreamFails(): Promise<void> {
    const down = () => Promise.reject(new UpstreamError({ endpoint: 'createRecords', method: 'POST', path: '/records' }, 503, 'down for maintenance', { attempts: 1 }));
    const failing = upstreamWith(h.client, { createRecords: down, updateRecords: down });
    await new SyncEngine({ client: failing, mirror: h.tm.mirror, options: LONG_BACKOFF }).runCycle();
  }

  /** Every entry due now, as if all backoffs had run out: what is left goes in the next cycle. */
  async function allDue(): Promise<void> {
    await h.tm.sql(`UPDATE ${h.tm.table('_wsmirror_outbox')} SET next_attempt_at = NULL`);
  }

  async function outboxCount(): Promise<number> {
    const [row] = await h.tm.sql<{ n: number | string }>(`SELECT count(*) AS n FROM ${h.tm.table('_wsmirror_outbox')}`);
    return Number(row!.n);
  }

  it('an edit backing off after a 503 never overwrites a newer edit of the same field', async () => {
    const { table, deal } = await deals();
    const sql = questionMarkSql(h.tm);
    await sql(`UPDATE ${table} SET title = ?, amount = ? WHERE id = ?`, ['older', 2, deal]);
    await cycleWhileUpstreamFails();
    await sql(`UPDATE ${table} SET title = ? WHERE id = ?`, ['newest', deal]);
    await h.sync();
    await allDue();
    await h.sync();
    expect((await h.upstream.allRecords('crm', 'deals')).map((r) => r.values)).toEqual([{ title: 'newest', amount: 2 }]);
    expect(await outboxCount()).toBe(0);
    await h.expectConverged('crm', 'deals');
  });

  it('a row inserted here and deleted while its create was backing off is never created upstream', async () => {
    const { table } = await deals();
    const sql = questionMarkSql(h.tm);
    await sql(`INSERT INTO ${table} (title, amount) VALUES (?, ?)`, ['local', 5]);
    const [row] = await sql<{ id: number | string }>(`SELECT id FROM ${table} WHERE title = ?`, ['local']);
    await cycleWhileUpstreamFails();
    await sql(`UPDATE ${table} SET amount = ? WHERE id = ?`, [6, Number(row!.id)]);
    await sql(`DELETE FROM ${table} WHERE id = ?`, [Number(row!.id)]);
    await h.sync();
    await allDue();
    await h.sync();
    expect((await h.upstream.allRecords('crm', 'deals')).map((r) => r.values.title)).toEqual(['upstream']);
    expect(await outboxCount()).toBe(0);
    await h.expectConverged('crm', 'deals');
  });

  it('a row deleted here after its create went out unanswered (a crash) deletes the record that create made', async () => {
    const { table } = await deals();
    const sql = questionMarkSql(h.tm);
    await sql(`INSERT INTO ${table} (title, amount) VALUES (?, ?)`, ['sent', 5]);
    // The create reaches upstream, and its answer is lost: the row keeps its temporary id.
    const lost = upstreamWith(h.client, {
      async createRecords(...args) {
        await h.client.createRecords(...args);
        throw new Error('connection reset after the request was sent');
      },
    });
    await new SyncEngine({ client: lost, mirror: h.tm.mirror, options: { ...LONG_BACKOFF, pushRetryBaseMs: 1, pushRetryMaxMs: 1 } }).runCycle()
      .catch(() => undefined);
    expect((await h.upstream.allRecords('crm', 'deals')).map((r) => r.values.title).sort()).toEqual(['sent', 'upstream']);
    const [row] = await sql<{ id: number | string }>(`SELECT id FROM ${table} WHERE title = ?`, ['sent']);
    expect(Number(row!.id)).toBeLessThan(0);
    await sql(`DELETE FROM ${table} WHERE id = ?`, [Number(row!.id)]);
    await h.sync();
    expect((await h.upstream.allRecords('crm', 'deals')).map((r) => r.values.title)).toEqual(['upstream']);
    expect(await outboxCount()).toBe(0);
    await h.expectConverged('crm', 'deals');
  });
});
