import { afterEach, expect, it } from 'vitest';
import type { ConflictPolicy } from '../../src/sync/push/conflict-policy.ts';
import { listOutbox } from '../../src/sync/push/outbox-admin.ts';
import { forEachDialect, questionMarkSql } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { field } from '../helpers/schema.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * A field may be called `id` (names match `^[a-z0-9_]+$`), but the API's update record carries
 * the record's id under `id` (spec, Records: "update records also carry `id`"), so no update can
 * set that field; a create's body is field name to value, so a create can. Edits made in SQL on a
 * separate connection, pushed through the real outbox and emulator.
 */
forEachDialect('push: a field named id', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  interface OutboxRow {
    record_id: number | string;
    operation: string;
    column_name: string | null;
    status: string;
    last_error: string | null;
  }

  async function setUp(conflictPolicy: ConflictPolicy = 'local-wins') {
    h = await startSyncHarness(dialect, { lookbackMs: 0, conflictPolicy });
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'codes', { hasHistory: true }, [field('id', 'string'), field('name', 'string')]);
    await h.sync();
    const entry = await catalogEntry(h.tm, 'crm', 'codes');
    if (!entry) throw new Error('crm.codes is not mirrored');
    const column = entry.fields.find((f) => f.name === 'id')!.column;
    // The mirror's own `id` is the record id: the field's column has another name.
    expect(column).not.toBe('id');
    return { table: h.tm.table(entry.sqlName), column: `"${column}"`, sql: questionMarkSql(h.tm) };
  }

  const outbox = () => h.tm.sql<OutboxRow>(
    `SELECT record_id, operation, column_name, status, last_error FROM ${h.tm.table('_wsmirror_outbox')} ORDER BY entry_id`);

  for (const policy of ['local-wins', 'upstream-wins', 'manual'] as const) {
    it(`${policy}: an edit of the field fails, naming it and why; upstream keeps its value; the record's other field still arrives`, async () => {
      const { table, column, sql } = await setUp(policy);
      const [record] = await h.upstream.createRecords('crm', 'codes', [{ id: 'A-1', name: 'first' }]);
      await h.sync();
      await sql(`UPDATE ${table} SET ${column} = ?, name = ? WHERE id = ?`, ['B-2', 'second', Number(record)]);
      const report = await h.sync();
      expect(report.push).toMatchObject({ pushed: 1, failed: 1 });

      expect((await h.upstream.allRecords('crm', 'codes')).map((r) => [r.id, r.values])).toEqual([[record, { id: 'A-1', name: 'second' }]]);
      const entries = await outbox();
      expect(entries.map((e) => [Number(e.record_id), e.operation, e.column_name, e.status])).toEqual([
        [Number(record), 'update', column.slice(1, -1), 'failed'],
      ]);
      expect(entries[0]!.last_error).toMatch(/^id: .*update.* record's id under "id"/);
      // As `wsmirror outbox --status failed` lists it.
      const failed = await listOutbox(h.tm.mirror, { statuses: ['failed'] });
      expect(failed.map((e) => [e.table, e.recordId, e.lastError])).toEqual([['crm.codes', Number(record), entries[0]!.last_error]]);

      // Failed is final: later cycles neither send it nor drop it.
      await h.sync();
      expect((await h.upstream.allRecords('crm', 'codes'))[0]!.values).toEqual({ id: 'A-1', name: 'second' });
      expect((await outbox()).map((e) => e.status)).toEqual(['failed']);
    });
  }

  it('an edit of the field alone sends nothing and fails', async () => {
    const { table, column, sql } = await setUp();
    const [record] = await h.upstream.createRecords('crm', 'codes', [{ id: 'A-1', name: 'first' }]);
    await h.sync();
    const patches = () => h.requests.filter((r) => r.method === 'PATCH').length;
    const before = patches();
    await sql(`UPDATE ${table} SET ${column} = ? WHERE id = ?`, ['B-2', Number(record)]);
    await h.sync();
    expect(patches()).toBe(before);
    expect((await h.upstream.allRecords('crm', 'codes'))[0]!.values).toEqual({ id: 'A-1', name: 'first' });
    expect((await outbox()).map((e) => [e.column_name, e.status])).toEqual([[column.slice(1, -1), 'failed']]);
  });

  it('a row inserted here creates its record with the field\'s value (a create\'s body is field name to value)', async () => {
    const { table, column, sql } = await setUp();
    await sql(`INSERT INTO ${table} (${column}, name) VALUES (?, ?)`, ['C-3', 'third']);
    await h.sync();
    const upstream = await h.upstream.allRecords('crm', 'codes');
    expect(upstream.map((r) => r.values)).toEqual([{ id: 'C-3', name: 'third' }]);
    const [row] = await sql<{ id: number | string; v: string }>(`SELECT id, ${column} AS v FROM ${table}`);
    expect([Number(row!.id), row!.v]).toEqual([Number(upstream[0]!.id), 'C-3']);
    expect(await outbox()).toEqual([]);
    await h.expectConverged('crm', 'codes');
  });
});
