import { afterEach, expect, it } from 'vitest';
import type { SyncOptions } from '../../src/sync/index.ts';
import { forEachDialect } from '../helpers/dialects.ts';
import { mirrorRows, upstreamRows } from '../helpers/mirror-snapshot.ts';
import { field } from '../helpers/schema.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * Upstream may refuse (400) a page of records that costs it too much to answer. The emulator does
 * when the expressions of one request take more than its budget of 1,000 ms (docs/expressions.md,
 * "Bounds"). Here each costly function field of a record runs into its own limit of 250 ms (the
 * nested select over 160 texts of 40,000 characters takes seconds on any machine), so a page of 4
 * such records or more is refused, one or two never are, and the value is null either way: every
 * read of it agrees.
 */
const COSTLY = 'if count(select filler where count(select filler where length(upper(t)) > 0) > 0) < 0 then 1 else null end';

forEachDialect('pull: pages upstream refuses as too costly', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  /** `docs` records: `costlyFields` function fields each, costly unless `s` is "cheap". */
  async function setUp(options: Partial<SyncOptions>, costlyFields: number, hasHistory: boolean) {
    h = await startSyncHarness(dialect, { lookbackMs: 0, tables: { exclude: ['lib.filler'] }, ...options });
    await h.upstream.createModule('lib');
    await h.upstream.createTable('lib', 'filler', {}, [field('t', 'string')]);
    await h.upstream.createRecords('lib', 'filler', Array.from({ length: 160 }, () => ({ t: 'x'.repeat(40_000) })), 40);
    const expression = `if s = "cheap" then null else ${COSTLY} end`;
    await h.upstream.createTable('lib', 'docs', { hasHistory }, [
      field('s', 'string'),
      ...Array.from({ length: costlyFields }, (_, i) => field(`f${i}`, 'function', { expression })),
    ]);
  }

  /** The mirror holds exactly upstream's records of lib.docs, read upstream one at a time. */
  async function expectDocsConverged() {
    const table = await h.upstream.getTable('lib', 'docs');
    const types = Object.fromEntries((table.fields as { name: string; type: string }[]).map((f) => [f.name, f.type]));
    const expected = upstreamRows(await h.upstream.allRecords('lib', 'docs', 1), types);
    const actual = await mirrorRows(h.tm, 'lib', 'docs');
    expect(Object.fromEntries(actual)).toEqual(Object.fromEntries(expected));
    return actual;
  }

  const refusals = () => h.requests.filter((r) => r.endpoint === 'listRecords' && r.status === 400).length;

  it('reads a table whose pages upstream refuses in smaller pages: backfill, then changes', async () => {
    await setUp({ pageSize: 5 }, 1, true);
    const ids = await h.upstream.createRecords('lib', 'docs', Array.from({ length: 7 }, (_, i) => ({ s: `d${i}` })));
    await h.sync();
    expect(refusals()).toBeGreaterThan(0);
    expect([...(await expectDocsConverged()).values()].map((r) => r.s)).toEqual(['d0', 'd1', 'd2', 'd3', 'd4', 'd5', 'd6']);

    // The changes of five records come in one page of changes; their records are read in fewer at a time.
    await h.upstream.updateRecords('lib', 'docs', ids.slice(1, 6).map((id, i) => ({ id, s: `e${i}` })));
    const before = refusals();
    const report = await h.sync();
    expect(report.tables.find((t) => t.table === 'lib.docs')).toMatchObject({ action: 'changes', upserted: 5 });
    expect(refusals()).toBeGreaterThan(before);
    expect([...(await expectDocsConverged()).values()].map((r) => r.s)).toEqual(['d0', 'e0', 'e1', 'e2', 'e3', 'e4', 'd6']);
  });

  it('a record upstream refuses even alone fails its table, naming the record and sync.pageSize', async () => {
    // Six costly fields: a costly record takes more than a second on its own.
    await setUp({ pageSize: 2 }, 6, false);
    const [cheap] = await h.upstream.createRecords('lib', 'docs', [{ s: 'cheap' }, { s: 'costly' }]);
    const report = await h.sync({ allowFailure: true });
    const failed = report.tables.find((t) => t.table === 'lib.docs');
    expect(failed?.action).toBe('failed');
    expect(failed?.error?.message).toContain(`the record after record ${cheap} (offset 1)`);
    expect(failed?.error?.message).toContain('sync.pageSize (2)');
    expect(failed?.error?.message).toContain('the expressions of this request took more than 1000 ms');
    // Recorded where `wsmirror status` and SQL read it.
    const [state] = await h.tm.sql<{ last_error_code: string; last_error: string }>(
      `SELECT last_error_code, last_error FROM ${h.tm.table('_wsmirror_tables')} WHERE table_name = 'docs'`);
    expect(state).toEqual({ last_error_code: 'UPSTREAM_BAD_REQUEST', last_error: failed?.error?.message });
  });
});
