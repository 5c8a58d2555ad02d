import { execFileSync } from 'node:child_process';
import { afterEach, expect, it } from 'vitest';
import { planSchema } from '../../src/mirror/schema-planner.ts';
import { SyncEngine } from '../../src/sync/index.ts';
import { discardOutbox, listOutbox, retryOutbox } from '../../src/sync/push/outbox-admin.ts';
import { forEachDialect, questionMarkSql } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { field } from '../helpers/schema.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * Local edits that wait in the outbox while upstream's schema changes under them. An edit follows
 * its field through a rename; one whose field or table is gone, or whose value JSON cannot carry,
 * is marked failed with a message and kept: none is counted as pushed without reaching upstream.
 */

/** The machine's `sqlite3` shell: an editing client whose SQLite may be older than wsmirror's. */
const sqliteShell = (() => {
  try {
    return execFileSync('sqlite3', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
})();

interface OutboxRow {
  record_id: number | string;
  column_name: string | null;
  status: string;
  last_error: string | null;
}

forEachDialect('push: local edits across upstream schema changes', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  async function people() {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'people', { hasHistory: true }, [field('name', 'string'), field('age', 'number'), field('email', 'string')]);
    const [id] = await h.upstream.createRecords('crm', 'people', [{ name: 'Ann', age: 30, email: 'ann@example.com' }]);
    await h.sync();
    const entry = await catalogEntry(h.tm, 'crm', 'people');
    return { id: Number(id), table: h.tm.table(entry!.sqlName), sql: questionMarkSql(h.tm) };
  }

  const outbox = () => h.tm.sql<OutboxRow>(`SELECT record_id, column_name, status, last_error FROM ${h.tm.table('_wsmirror_outbox')} ORDER BY entry_id`);
  /** Each entry's column and status. */
  const entries = async () => (await outbox()).map((e) => [e.column_name, e.status]);

  /** Upstream's record holds `values`, nothing waits in the outbox, and the mirror equals upstream. */
  async function expectPushed(values: Record<string, unknown>) {
    expect((await h.upstream.allRecords('crm', 'people'))[0]!.values).toMatchObject(values);
    expect(await outbox()).toEqual([]);
    await h.expectConverged('crm', 'people');
  }

  /** The schema step of a cycle alone: upstream's workspace planned against the catalog and applied. */
  async function applyUpstreamSchema() {
    await h.tm.mirror.applySchemaPlan(planSchema(await h.tm.mirror.readCatalog(), await h.client.getWorkspace()));
  }

  it('an edit waiting while its field is renamed upstream goes to the renamed field', async () => {
    const { id, table, sql } = await people();
    await sql(`UPDATE ${table} SET name = ? WHERE id = ?`, ['Ann local', id]);
    await h.upstream.patchField('crm', 'people', 'name', { name: 'full_name' });
    await applyUpstreamSchema();
    // The outbox speaks of the column by its new name, as the mirror does.
    expect(await entries()).toEqual([['full_name', 'pending']]);
    await h.sync();
    await expectPushed({ full_name: 'Ann local', age: 30 });
  });

  it('a cycle applies upstream\'s schema before it pushes: an edit of a field renamed since goes out under the new name', async () => {
    const { id, table, sql } = await people();
    await sql(`UPDATE ${table} SET name = ? WHERE id = ?`, ['Ann local', id]);
    await h.upstream.patchField('crm', 'people', 'name', { name: 'full_name' });
    await h.sync();
    expect((await h.upstream.allRecords('crm', 'people'))[0]!.values).toMatchObject({ full_name: 'Ann local' });
    expect(await outbox()).toEqual([]);
  });

  it('a cycle applies upstream\'s schema before it pushes: an edit of a field deleted and made again under its name is not sent', async () => {
    const { id, table, sql } = await people();
    await sql(`UPDATE ${table} SET email = ? WHERE id = ?`, ['old-field local edit', id]);
    await h.upstream.deleteField('crm', 'people', 'email');
    await h.upstream.addFields('crm', 'people', [field('email', 'string')]);
    await h.sync();
    expect((await h.upstream.allRecords('crm', 'people'))[0]!.values).toMatchObject({ email: null });
    expect(await entries()).toEqual([['email', 'failed']]);
    await h.expectConverged('crm', 'people');
  });

  it('a failed edit of a renamed field keeps its local value through a re-read, and a retry sends it', async () => {
    const { id, table, sql } = await people();
    await sql(`UPDATE ${table} SET name = ? WHERE id = ?`, ['Ann local', id]);
    // An edit upstream refused once (say a rule upstream has since dropped): failed, waiting for
    // the operator.
    await h.tm.sql(`UPDATE ${h.tm.table('_wsmirror_outbox')} SET status = 'failed', last_error = 'refused'`);
    // Renamed meanwhile; a new field with a default makes the cycle read the whole table again,
    // and the record changes upstream.
    await h.upstream.patchField('crm', 'people', 'name', { name: 'full_name' });
    await h.upstream.addFields('crm', 'people', [field('tier', 'string', { defaultValue: 'basic' })]);
    await h.upstream.updateRecords('crm', 'people', [{ id, age: 31 }]);
    await h.sync();
    expect(await entries()).toEqual([['full_name', 'failed']]);
    expect((await sql<Record<string, unknown>>(`SELECT full_name, age FROM ${table} WHERE id = ?`, [id])).map((r) => [r['full_name'], Number(r['age'])]))
      .toEqual([['Ann local', 31]]);
    expect(await h.tm.mirror.retryOutbox({})).toBe(1);
    await h.sync();
    await expectPushed({ full_name: 'Ann local', age: 31 });
  });

  it('an edit whose field was deleted upstream fails with a message, also when retried, and sends nothing', async () => {
    const { id, table, sql } = await people();
    await sql(`UPDATE ${table} SET email = ?, age = ? WHERE id = ?`, ['ann@local.example', 31, id]);
    await h.upstream.deleteField('crm', 'people', 'email');
    await applyUpstreamSchema();
    for (const attempt of [1, 2]) {
      await h.sync();
      expect(await entries()).toEqual([['email', 'failed']]);
      expect((await outbox())[0]!.last_error).toMatch(/email.*no longer/);
      if (attempt === 1) expect(await h.tm.mirror.retryOutbox({})).toBe(1);
    }
    // The record's other edit went through.
    expect((await h.upstream.allRecords('crm', 'people'))[0]!.values).toEqual({ name: 'Ann', age: 31 });
  });

  it('an edit waiting while its field is deleted and made again under the same name is not sent to the new field', async () => {
    const { id, table, sql } = await people();
    await sql(`UPDATE ${table} SET age = ? WHERE id = ?`, [31, id]);
    // A type change upstream: the field is deleted and created again with another type.
    await h.upstream.deleteField('crm', 'people', 'age');
    await h.upstream.addFields('crm', 'people', [field('age', 'string')]);
    const [record] = await h.upstream.allRecords('crm', 'people');
    await h.upstream.updateRecords('crm', 'people', [{ id: record!.id, age: 'thirty' }]);
    await applyUpstreamSchema();
    await h.sync();
    expect((await h.upstream.allRecords('crm', 'people'))[0]!.values).toMatchObject({ age: 'thirty' });
    expect(await entries()).toEqual([['age', 'failed']]);
    expect((await outbox())[0]!.last_error).toMatch(/age.*no longer/);
    // The failed edit of the old field does not hold the new field's column back.
    await h.expectConverged('crm', 'people');
  });

  it('a local insert whose later edit names a field deleted upstream since is still created; only that edit fails', async () => {
    const { table, sql } = await people();
    await sql(`INSERT INTO ${table} (name, email) VALUES (?, ?)`, ['Bob', 'bob@example.com']);
    await sql(`UPDATE ${table} SET email = ? WHERE name = ?`, ['bob@local.example', 'Bob']);
    await h.upstream.deleteField('crm', 'people', 'email');
    await applyUpstreamSchema();
    await h.sync();
    const names = (await h.upstream.allRecords('crm', 'people')).map((r) => r.values.name);
    expect(names).toEqual(['Ann', 'Bob']);
    expect(await entries()).toEqual([['email', 'failed']]);
  });

  it('edits of a table deleted upstream fail with a message instead of waiting for ever', async () => {
    const { id, table, sql } = await people();
    await sql(`UPDATE ${table} SET age = ? WHERE id = ?`, [31, id]);
    await h.upstream.deleteTable('crm', 'people');
    await applyUpstreamSchema();
    await h.sync();
    const rows = await outbox();
    expect(rows.map((e) => e.status)).toEqual(['failed']);
    expect(rows[0]!.last_error).toMatch(/no longer mirrored/);
    // The listing names such a table by the SQL name its entries keep, and so can a selection.
    const [listed] = await listOutbox(h.tm.mirror, {});
    expect(listed!.table).toBe(listed!.sqlTable);
    expect(await discardOutbox(h.tm.mirror, h.client, { tables: [listed!.tableId] })).toEqual({ entries: 1, records: 0, localRows: 0 });
    expect(await outbox()).toEqual([]);
  });

  it('a number JSON cannot carry (NaN, Infinity) fails with a message and leaves upstream as it was', async () => {
    if (dialect.dialect === 'sqlite') {
      // SQLite stores no NaN (it reads NULL) but does store infinities: 9e999 is +Inf.
      const { id, table, sql } = await people();
      await sql(`UPDATE ${table} SET age = 9e999, name = ? WHERE id = ?`, ['Ann local', id]);
      await h.sync();
    } else {
      const { id, table, sql } = await people();
      await sql(`UPDATE ${table} SET age = 'NaN', name = ? WHERE id = ?`, ['Ann local', id]);
      await h.sync();
    }
    expect((await h.upstream.allRecords('crm', 'people'))[0]!.values).toEqual({ name: 'Ann local', age: 30, email: 'ann@example.com' });
    const rows = await outbox();
    expect(rows.map((e) => [e.column_name, e.status])).toEqual([['age', 'failed']]);
    expect(rows[0]!.last_error).toMatch(/age.*finite number/);
  });
  it.runIf(dialect.dialect === 'sqlite')('text in a number column that is no decimal number (blank, hex, octal, binary) fails with a message instead of going as another number', async () => {
    const { id, table, sql } = await people();
    await sql(`UPDATE ${table} SET age = ? WHERE id = ?`, ['0x1F', id]);
    for (const age of [' ', '\t', '0o17', '0b101']) await sql(`INSERT INTO ${table} (name, age) VALUES (?, ?)`, [`age ${JSON.stringify(age)}`, age]);
    await h.sync();
    expect((await h.upstream.allRecords('crm', 'people')).map((r) => r.values)).toEqual([{ name: 'Ann', age: 30, email: 'ann@example.com' }]);
    const rows = await outbox();
    expect(rows.map((e) => e.status)).toEqual(['failed', 'failed', 'failed', 'failed', 'failed']);
    for (const [row, text] of rows.map((r, i) => [r, ['0x1F', ' ', '\t', '0o17', '0b101'][i]!] as const)) {
      expect(row.last_error).toMatch(/^age: .*finite number/);
      expect(row.last_error).toContain(`got ${JSON.stringify(text)}`);
    }
  });

  it('a failed edit retried after its row was read again from upstream sends the value it lists, not upstream\'s', async () => {
    const { id, table, sql } = await people();
    await sql(`UPDATE ${table} SET age = ? WHERE id = ?`, [99, id]);
    // The table leaves the selection (a typo in tables.include, say): dropped, its edit failed.
    const narrowed = new SyncEngine({ client: h.client, mirror: h.tm.mirror, options: { lookbackMs: 0, tables: { include: ['crm.peple'] } } });
    await narrowed.runCycle({ forceFullScan: true });
    expect(await entries()).toEqual([['age', 'failed']]);
    // Back in the selection: the table is read again from upstream, the edit still listed.
    await h.sync();
    const [listed] = await listOutbox(h.tm.mirror, {});
    expect(listed).toMatchObject({ fieldName: 'age', oldValue: 30, newValue: 99, status: 'failed' });
    expect(await retryOutbox(h.tm.mirror, { entryIds: [listed!.entryId] })).toEqual({ retried: 1, deletedUpstream: [] });
    await h.sync();
    await expectPushed({ name: 'Ann', age: 99 });
  });
  it('a row inserted here whose table leaves the selection keeps its values in its entry; retried once the table is back, it is created with them, once', async () => {
    const { table, sql } = await people();
    await sql(`INSERT INTO ${table} (name, age) VALUES (?, ?)`, ['Bea', 41]);
    // The table leaves the selection before the row is created upstream: its SQL table is dropped.
    const narrowed = new SyncEngine({ client: h.client, mirror: h.tm.mirror, options: { lookbackMs: 0, tables: { include: ['crm.peple'] } } });
    await narrowed.runCycle({ forceFullScan: true });
    expect(await entries()).toEqual([[null, 'failed']]);
    expect((await outbox())[0]!.last_error).toMatch(/no longer mirrored.*values .*kept/);
    // The values are in the entry, in SQL and in the listing.
    const [kept] = await listOutbox(h.tm.mirror, {});
    expect(kept).toMatchObject({ operation: 'insert', newValue: { name: 'Bea', age: 41 } });
    // Back in the selection and retried: created from the values kept.
    await h.sync();
    expect(await retryOutbox(h.tm.mirror, { entryIds: [kept!.entryId] })).toMatchObject({ retried: 1 });
    await h.sync();
    await h.sync();
    expect((await h.upstream.allRecords('crm', 'people')).map((r) => [r.values['name'], r.values['age']]))
      .toEqual([['Ann', 30], ['Bea', 41]]);
    expect(await outbox()).toEqual([]);
    await h.expectConverged('crm', 'people');
  });

  it('a create whose row is gone and whose values were not kept fails with its later edits, saying so, and sends nothing', async () => {
    const { table, sql } = await people();
    await sql(`INSERT INTO ${table} (name, age) VALUES (?, ?)`, ['Bea', 41]);
    const [bea] = await sql<{ id: number }>(`SELECT id FROM ${table} WHERE name = ?`, ['Bea']);
    await sql(`UPDATE ${table} SET age = 42 WHERE id = ?`, [bea!.id]);
    // As a row that went without a captured delete (a REPLACE of older capture triggers, or a
    // table an older wsmirror dropped before its values were kept).
    await sql(`DELETE FROM ${table} WHERE id = ?`, [bea!.id]);
    await h.tm.sql(`DELETE FROM ${h.tm.table('_wsmirror_outbox')} WHERE operation = 'delete'`);
    await h.tm.sql(`UPDATE ${h.tm.table('_wsmirror_outbox')} SET new_value = NULL`);
    await h.sync();
    expect((await h.upstream.allRecords('crm', 'people')).map((r) => r.values['name'])).toEqual(['Ann']);
    const rows = await outbox();
    expect(rows.map((e) => [e.column_name, e.status])).toEqual([[null, 'failed'], ['age', 'failed']]);
    expect(rows[0]!.last_error).toMatch(/no longer in the mirror.*nothing was sent/);
  });

  it('a number keeps every digit through the outbox: the edit arrives exactly, and a value upstream still holds is no conflict', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0, conflictPolicy: 'upstream-wins' });
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'people', { hasHistory: true }, [field('age', 'number'), field('score', 'number')]);
    const [id] = await h.upstream.createRecords('crm', 'people', [{ age: 0.30000000000000004, score: 1 }]);
    await h.sync();
    const table = h.tm.table((await catalogEntry(h.tm, 'crm', 'people'))!.sqlName);
    await questionMarkSql(h.tm)(`UPDATE ${table} SET age = age * 3, score = CAST(1 AS REAL) / 3 WHERE id = ?`.replace('REAL', dialect.dialect === 'postgres' ? 'double precision' : 'REAL'), [Number(id)]);
    await h.sync();
    expect((await h.upstream.allRecords('crm', 'people'))[0]!.values).toEqual({ age: 0.30000000000000004 * 3, score: 1 / 3 });
    expect(await outbox()).toEqual([]);
  });

  it('an infinity captured on SQLite fails its edit with a message, and the outbox stays readable', async () => {
    const { id, table, sql } = await people();
    await sql(`UPDATE ${table} SET age = ${dialect.dialect === 'sqlite' ? '9e999' : "'Infinity'"} WHERE id = ?`, [id]);
    const listed = await listOutbox(h.tm.mirror, {});
    expect(listed).toHaveLength(1);
    await h.sync();
    const rows = await outbox();
    expect(rows.map((e) => [e.column_name, e.status])).toEqual([['age', 'failed']]);
    expect(rows[0]!.last_error).toMatch(/age.*finite number/);
    // Fixed in SQL: the new edit goes, the failed one is discarded.
    await sql(`UPDATE ${table} SET age = 41 WHERE id = ?`, [id]);
    await h.sync();
    expect((await h.upstream.allRecords('crm', 'people'))[0]!.values.age).toBe(41);
  });
  it.skipIf(dialect.dialect !== 'sqlite' || sqliteShell === undefined)(`edits made in the sqlite3 shell (${sqliteShell ?? 'absent'}) keep every digit, and its infinities fail with a message`, async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0, conflictPolicy: 'upstream-wins' });
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'people', { hasHistory: true }, [field('age', 'number'), field('score', 'number'), field('name', 'string')]);
    const ids = (await h.upstream.createRecords('crm', 'people', [{ age: 0.30000000000000004, score: 1, name: 'a' }, { age: 1, score: 1, name: 'b' }])).map(Number);
    await h.sync();
    const table = h.tm.table((await catalogEntry(h.tm, 'crm', 'people'))!.sqlName);
    const file = h.tm.url.slice('sqlite:'.length);
    execFileSync('sqlite3', [file, `PRAGMA busy_timeout = 5000; UPDATE ${table} SET age = age * 3, score = 1.0 / 3 WHERE id = ${ids[0]}; UPDATE ${table} SET age = 9e999, name = 'b2' WHERE id = ${ids[1]};`]);
    // The listing reads every entry, the infinity's included.
    expect(await listOutbox(h.tm.mirror, {})).toHaveLength(4);
    await h.sync();
    const [first, second] = await h.upstream.allRecords('crm', 'people');
    expect(first!.values).toEqual({ age: 0.30000000000000004 * 3, score: 1 / 3, name: 'a' });
    expect(second!.values).toEqual({ age: 1, score: 1, name: 'b2' });
    const rows = await outbox();
    expect(rows.map((e) => [e.column_name, e.status])).toEqual([['age', 'failed']]);
    expect(rows[0]!.last_error).toMatch(/age.*finite number/);
  });
});
