import { expect, it } from 'vitest';
import { CATALOG_VERSION } from '../../src/mirror/catalog-tables.ts';
import { forEachDialect } from '../helpers/dialects.ts';
import type { TestMirror } from '../helpers/dialects.ts';
import { field, module, sync, table, workspace } from './fixtures.ts';
import { rewriteSqliteTable } from '../helpers/sqlite-schema.ts';

/**
 * Capture of local edits: every write made through a separate SQL connection (as a BI tool or
 * psql would) lands in `_wsmirror_outbox`; the daemon's own writes never do; read-only columns
 * refuse writes; the triggers follow every schema change.
 */
const FIELDS = [
  field('fa', 'title', 'string'),
  field('fb', 'amount', 'number'),
  field('fc', 'won', 'boolean'),
  field('fd', 'total', 'function'),
  field('fe', 'tags', 'multi'),
];
const WS = workspace(module('m1', 'crm', [table('t1', 'deals', FIELDS)]));

interface Entry {
  entry_id: unknown;
  table_id: string;
  sql_table: string;
  record_id: unknown;
  operation: string;
  column_name: string | null;
  field_id: string | null;
  old_value: unknown;
  new_value: unknown;
  status: string;
}

async function outbox(t: TestMirror): Promise<Entry[]> {
  const rows = await t.sql<Entry>(`SELECT * FROM ${t.table('_wsmirror_outbox')} ORDER BY "entry_id"`);
  // Postgres jsonb arrives parsed; SQLite holds JSON text.
  const json = (v: unknown) => (t.dialect === 'sqlite' && typeof v === 'string' ? JSON.parse(v) : v);
  return rows.map((r) => ({
    ...r, entry_id: Number(r.entry_id), record_id: r.record_id === null ? null : Number(r.record_id),
    old_value: r.old_value === null ? null : json(r.old_value), new_value: r.new_value === null ? null : json(r.new_value),
  }));
}

function p(t: TestMirror, n: number): string {
  return t.dialect === 'postgres' ? `$${n}` : '?';
}

async function seeded(fresh: () => Promise<TestMirror>): Promise<TestMirror> {
  const t = await fresh();
  await sync(t.mirror, WS);
  await t.mirror.applyRows('t1', {
    upserts: [
      { id: 1, values: { title: 'a', amount: 1, won: false, total: 10, tags: ['x'] } },
      { id: 2, values: { title: 'b', amount: 2, won: true, total: 20, tags: null } },
    ],
  });
  return t;
}

forEachDialect('capture of local edits', ({ fresh, dialect }) => {
  it('records nothing for the daemon\'s own writes', async () => {
    const t = await seeded(fresh);
    await t.mirror.applyRows('t1', { upserts: [{ id: 1, values: { title: 'a2', amount: 5 } }], deletes: [2] });
    expect(await outbox(t)).toEqual([]);
  });

  it('records one entry per changed column of an UPDATE, with old and new values', async () => {
    const t = await seeded(fresh);
    await t.sql(`UPDATE ${t.table('crm__deals')} SET "title" = ${p(t, 1)}, "amount" = 3, "won" = "won" WHERE "id" = 1`, ['A!']);
    await t.sql(`UPDATE ${t.table('crm__deals')} SET "tags" = ${p(t, 1)} WHERE "id" = 2`, [JSON.stringify(['y', 'z'])]);
    const entries = await outbox(t);
    expect(entries.map((e) => [e.record_id, e.operation, e.column_name, e.field_id, e.old_value, e.new_value, e.status, e.table_id, e.sql_table])).toEqual([
      [1, 'update', 'title', 'fa', 'a', 'A!', 'pending', 't1', 'crm__deals'],
      [1, 'update', 'amount', 'fb', 1, 3, 'pending', 't1', 'crm__deals'],
      // JSON columns: Postgres stores the jsonb value, SQLite the JSON text as a string.
      [2, 'update', 'tags', 'fe', null, dialect === 'postgres' ? ['y', 'z'] : '["y","z"]', 'pending', 't1', 'crm__deals'],
    ]);
  });

  it('gives an INSERT a negative temporary id (minus its entry id), with or without an id given', async () => {
    const t = await seeded(fresh);
    await t.sql(`INSERT INTO ${t.table('crm__deals')} ("title", "_synced_at") VALUES ('new one', ${p(t, 1)})`, [new Date().toISOString()]);
    await t.sql(`INSERT INTO ${t.table('crm__deals')} ("id", "title", "_synced_at") VALUES (777, 'explicit', ${p(t, 1)})`, [new Date().toISOString()]);
    const rows = await t.sql<{ id: unknown; title: string }>(`SELECT "id", "title" FROM ${t.table('crm__deals')} WHERE "id" < 0 ORDER BY "title"`);
    const entries = (await outbox(t)).filter((e) => e.operation === 'insert');
    expect(entries).toHaveLength(2);
    for (const e of entries) expect(e.record_id).toBe(-(e.entry_id as number));
    expect(rows.map((r) => [r.title, Number(r.id)]).sort()).toEqual(
      [['explicit', entries[1]!.record_id], ['new one', entries[0]!.record_id]].sort(),
    );
    // Updating a new row records updates on its temporary id.
    await t.sql(`UPDATE ${t.table('crm__deals')} SET "amount" = 9 WHERE "title" = 'new one'`);
    expect((await outbox(t)).at(-1)).toMatchObject({ operation: 'update', record_id: entries[0]!.record_id, column_name: 'amount', new_value: 9 });
  });

  it('takes a plain INSERT that names neither id nor _synced_at (NULL until wsmirror writes the row)', async () => {
    const t = await seeded(fresh);
    await t.sql(`INSERT INTO ${t.table('crm__deals')} ("title", "amount") VALUES ('plain', 4)`);
    const rows = await t.sql<{ id: unknown; _synced_at: unknown }>(`SELECT "id", "_synced_at" FROM ${t.table('crm__deals')} WHERE "title" = 'plain'`);
    expect(rows).toHaveLength(1);
    expect(Number(rows[0]!.id)).toBeLessThan(0);
    expect(rows[0]!._synced_at).toBeNull();
    expect((await outbox(t)).map((e) => [e.operation, e.record_id])).toEqual([['insert', Number(rows[0]!.id)]]);
  });

  it('an INSERT naming the id of a row it has is that row\'s: a plain one fails on the key, an upsert updates it (or does nothing), and no record is created', async () => {
    const t = await seeded(fresh);
    const deals = t.table('crm__deals');
    await expect(t.sql(`INSERT INTO ${deals} ("id", "title") VALUES (1, 'again')`)).rejects.toThrow(/unique|UNIQUE|duplicate key/);
    await t.sql(`INSERT INTO ${deals} ("id", "title", "amount") VALUES (1, 'upserted', 5) ON CONFLICT ("id") DO UPDATE SET "title" = excluded."title", "amount" = excluded."amount"`);
    await t.sql(`INSERT INTO ${deals} ("id", "title") VALUES (2, 'ignored') ON CONFLICT DO NOTHING`);
    expect((await outbox(t)).map((e) => [e.operation, e.record_id, e.column_name, e.new_value])).toEqual([
      ['update', 1, 'title', 'upserted'], ['update', 1, 'amount', 5],
    ]);
    const rows = await t.sql<{ id: unknown; title: string }>(`SELECT "id", "title" FROM ${deals} ORDER BY "id"`);
    expect(rows.map((r) => [Number(r.id), r.title])).toEqual([[1, 'upserted'], [2, 'b']]);
  });

  it.skipIf(dialect !== 'sqlite')('REPLACE naming a row\'s id is an update of that row (pulled or inserted here), with or without recursive_triggers; upserts and OR IGNORE are as before', async () => {
    const t = await seeded(fresh);
    const deals = t.table('crm__deals');
    // Columns REPLACE does not name are cleared, as SQLite's REPLACE does: amount and tags.
    await t.sql(`REPLACE INTO ${deals} ("id", "title", "won") VALUES (1, 'replaced', 1)`);
    await t.sql(`INSERT INTO ${deals} ("title", "amount") VALUES ('local', 7)`);
    const [local] = await t.sql<{ id: number }>(`SELECT "id" FROM ${deals} WHERE "title" = 'local'`);
    await t.sql(`INSERT OR REPLACE INTO ${deals} ("id", "title", "amount") VALUES (${local!.id}, 'local 2', 8)`);
    await t.sql('PRAGMA recursive_triggers = ON');
    await t.sql(`REPLACE INTO ${deals} ("id", "title", "amount", "won") VALUES (2, 'b', 3, 1)`);
    await t.sql('PRAGMA recursive_triggers = OFF');
    // An OR IGNORE or an upsert leaves no trace for the next INSERT.
    await t.sql(`INSERT OR IGNORE INTO ${deals} ("id", "title") VALUES (1, 'ignored')`);
    await t.sql(`INSERT INTO ${deals} ("id", "title") VALUES (1, 'upserted') ON CONFLICT ("id") DO UPDATE SET "title" = excluded."title"`);
    await t.sql(`INSERT INTO ${deals} ("id", "title") VALUES (1, 'new row') ON CONFLICT DO NOTHING`);
    await t.sql(`INSERT OR IGNORE INTO ${deals} ("id", "title") VALUES (900, 'new row')`);
    const rows = await t.sql<{ id: number; title: string; amount: number | null }>(`SELECT "id", "title", "amount" FROM ${deals} ORDER BY "title"`);
    const fresh900 = rows.find((r) => r.title === 'new row')!;
    expect(fresh900.id).toBeLessThan(0);
    expect(rows.map((r) => [r.id, r.title, r.amount])).toEqual([
      [2, 'b', 3], [local!.id, 'local 2', 8], [fresh900.id, 'new row', null], [1, 'upserted', null],
    ]);
    expect((await outbox(t)).map((e) => [e.operation, e.record_id, e.column_name, e.old_value, e.new_value])).toEqual([
      ['update', 1, 'title', 'a', 'replaced'], ['update', 1, 'amount', 1, null], ['update', 1, 'won', 0, 1], ['update', 1, 'tags', '["x"]', null],
      ['insert', local!.id, null, null, null],
      ['update', local!.id, 'title', 'local', 'local 2'], ['update', local!.id, 'amount', 7, 8],
      ['update', 2, 'amount', 2, 3],
      ['update', 1, 'title', 'replaced', 'upserted'],
      ['insert', fresh900.id, null, null, null],
    ]);
  });

  it('a pulled row an INSERT naming its id rewrites (REPLACE, upsert) keeps its _synced_at unless the INSERT names one', async () => {
    const t = await seeded(fresh);
    const deals = t.table('crm__deals');
    const syncedAt = async () => new Map((await t.sql<{ id: unknown; _synced_at: unknown }>(`SELECT "id", "_synced_at" FROM ${deals} ORDER BY "id"`))
      .map((r) => [Number(r.id), r._synced_at === null ? null : new Date(r._synced_at as string | Date).toISOString()]));
    const pulled = await syncedAt();
    expect([...pulled.values()].every((at) => at !== null)).toBe(true);
    const later = new Date(Date.parse(pulled.get(2)!) + 60_000).toISOString();
    await t.sql(`INSERT INTO ${deals} ("id", "title") VALUES (1, 'upserted') ON CONFLICT ("id") DO UPDATE SET "title" = excluded."title"`);
    if (dialect === 'sqlite') {
      await t.sql(`REPLACE INTO ${deals} ("id", "title") VALUES (1, 'replaced')`);
      await t.sql('PRAGMA recursive_triggers = ON');
      await t.sql(`INSERT OR REPLACE INTO ${deals} ("id", "title") VALUES (1, 'replaced again')`);
      await t.sql('PRAGMA recursive_triggers = OFF');
      await t.sql(`REPLACE INTO ${deals} ("id", "title", "_synced_at") VALUES (2, 'named', ?)`, [later]);
    } else {
      await t.sql(`INSERT INTO ${deals} ("id", "title", "_synced_at") VALUES (2, 'named', $1) ON CONFLICT ("id") DO UPDATE SET "title" = excluded."title", "_synced_at" = excluded."_synced_at"`, [later]);
    }
    expect(await syncedAt()).toEqual(new Map([[1, pulled.get(1)], [2, later]]));
  });

  it.skipIf(dialect !== 'sqlite')('captures a BLOB without failing, and later edits of its column are captured', async () => {
    const t = await seeded(fresh);
    const deals = t.table('crm__deals');
    await t.sql(`INSERT INTO ${deals} ("title", "amount") VALUES ('Blob', x'3132')`);
    await t.sql(`UPDATE ${deals} SET "amount" = x'3334' WHERE "id" = 1`);
    await t.sql(`UPDATE ${deals} SET "amount" = 5 WHERE "id" = 1`);
    await t.sql(`UPDATE ${deals} SET "amount" = 6 WHERE "title" = 'Blob'`);
    expect((await outbox(t)).map((e) => [e.operation, e.column_name, e.old_value, e.new_value])).toEqual([
      ['insert', null, null, null],
      ['update', 'amount', 1, { 'wsmirror:blob': '3334' }],
      ['update', 'amount', { 'wsmirror:blob': '3334' }, 5],
      ['update', 'amount', { 'wsmirror:blob': '3132' }, 6],
    ]);
  });

  it.skipIf(dialect !== 'sqlite')('refuses an id change to the temporary id of an insert whose row is gone', async () => {
    const t = await seeded(fresh);
    const deals = t.table('crm__deals');
    await t.sql(`INSERT INTO ${deals} ("title") VALUES ('Ghost')`);
    const [ghost] = await t.sql<{ id: number }>(`SELECT "id" FROM ${deals} WHERE "title" = 'Ghost'`);
    await t.sql(`DELETE FROM ${deals} WHERE "title" = 'Ghost'`);
    await expect(t.sql(`UPDATE ${deals} SET "id" = ${ghost!.id} WHERE "id" = 1`)).rejects.toThrow(/id of a mirrored row cannot be changed/);
  });

  it.skipIf(dialect !== 'postgres')('refuses a TRUNCATE, which no row trigger sees, naming DELETE instead', async () => {
    const t = await seeded(fresh);
    await expect(t.sql(`TRUNCATE ${t.table('crm__deals')}`)).rejects.toThrow(/TRUNCATE of crm__deals is not captured.*DELETE/);
    expect(await t.sql(`SELECT "id" FROM ${t.table('crm__deals')}`)).toHaveLength(2);
  });

  it('records a DELETE', async () => {
    const t = await seeded(fresh);
    await t.sql(`DELETE FROM ${t.table('crm__deals')} WHERE "id" = 2`);
    expect((await outbox(t)).map((e) => [e.operation, e.record_id, e.column_name])).toEqual([['delete', 2, null]]);
  });

  it('refuses writes to read-only columns and id changes, naming the column, and records nothing', async () => {
    const t = await seeded(fresh);
    await expect(t.sql(`UPDATE ${t.table('crm__deals')} SET "total" = '5' WHERE "id" = 1`)).rejects.toThrow(/column total of crm__deals is read-only/);
    await expect(t.sql(`INSERT INTO ${t.table('crm__deals')} ("title", "total", "_synced_at") VALUES ('x', '5', ${p(t, 1)})`, [new Date().toISOString()]))
      .rejects.toThrow(/column total of crm__deals is read-only/);
    await expect(t.sql(`UPDATE ${t.table('crm__deals')} SET "id" = 5 WHERE "id" = 1`)).rejects.toThrow(/id of a mirrored row cannot be changed/);
    expect(await outbox(t)).toEqual([]);
    const [row] = await t.sql<{ total: unknown }>(`SELECT "total" FROM ${t.table('crm__deals')} WHERE "id" = 1`);
    expect(row!.total).toEqual(dialect === 'postgres' ? 10 : '10');
  });

  it('keeps capturing after columns are added, renamed, retyped and dropped and the table is renamed', async () => {
    const t = await seeded(fresh);
    const changed = workspace(module('m1', 'crm', [table('t1', 'opportunities', [
      field('fa', 'headline', 'string'), // renamed
      field('fb', 'amount', 'string'), // retyped (number → text: rebuilt)
      // won dropped
      field('fd', 'total', 'function'),
      field('fe', 'tags', 'multi'),
      field('ff', 'note', 'string'), // added
      field('fg', 'score', 'function'), // added, read-only
    ])]));
    const plan = await sync(t.mirror, changed);
    expect(plan.ops.map((o) => o.op)).toEqual(expect.arrayContaining(['renameTable', 'renameColumn', 'retypeColumn', 'dropColumn', 'addColumn']));
    const deals = t.table('crm__opportunities');
    await t.sql(`UPDATE ${deals} SET "headline" = 'H', "amount" = 'lots', "note" = 'n' WHERE "id" = 1`);
    await expect(t.sql(`UPDATE ${deals} SET "score" = '1' WHERE "id" = 1`)).rejects.toThrow(/column score of crm__opportunities is read-only/);
    await t.sql(`DELETE FROM ${deals} WHERE "id" = 2`);
    const entries = await outbox(t);
    expect(entries.map((e) => [e.sql_table, e.operation, e.record_id, e.column_name, e.field_id, e.new_value])).toEqual([
      ['crm__opportunities', 'update', 1, 'headline', 'fa', 'H'],
      ['crm__opportunities', 'update', 1, 'amount', 'fb', 'lots'],
      ['crm__opportunities', 'update', 1, 'note', 'ff', 'n'],
      ['crm__opportunities', 'delete', 2, null, null, null],
    ]);
    // And the daemon can still change the schema again (SQLite: a dropped column no trigger holds).
    await sync(t.mirror, workspace(module('m1', 'crm', [table('t1', 'opportunities', [field('fa', 'headline', 'string')])])));
    await t.sql(`UPDATE ${deals} SET "headline" = 'H2' WHERE "id" = 1`);
    expect((await outbox(t)).at(-1)).toMatchObject({ column_name: 'headline', new_value: 'H2' });
  });
});

forEachDialect('catalog layout 1 → current', ({ fresh, dialect }) => {
  it('adds the outbox, view and table state columns and installs capture on the existing tables when opened', async () => {
    const t = await seeded(fresh);
    // Make it look like a layout-1 mirror: no sending_since, no triggers, no capture version.
    if (dialect === 'postgres') {
      const triggers = await t.sql<{ name: string }>(
        `SELECT tgname AS name FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal`, [t.table('crm__deals')],
      );
      expect(triggers.length).toBeGreaterThan(0);
      for (const { name } of triggers) await t.sql(`DROP TRIGGER "${name}" ON ${t.table('crm__deals')}`);
    } else {
      const triggers = await t.sql<{ name: string }>(`SELECT name FROM sqlite_schema WHERE type = 'trigger'`);
      for (const { name } of triggers) await t.sql(`DROP TRIGGER "${name}"`);
    }
    await t.sql(`ALTER TABLE ${t.table('_wsmirror_outbox')} DROP COLUMN "sending_since"`);
    await t.sql(`ALTER TABLE ${t.table('_wsmirror_outbox')} DROP COLUMN "retried_at"`);
    for (const column of ['current_as_of', 'last_error_code', 'last_error', 'last_error_at']) {
      await t.sql(`ALTER TABLE ${t.table('_wsmirror_tables')} DROP COLUMN "${column}"`);
    }
    await t.sql(`DROP VIEW ${t.table('crm__deals_v')}`);
    await t.sql(`ALTER TABLE ${t.table('_wsmirror_tables')} DROP COLUMN "view_name"`);
    for (const column of ['sql_table', 'ref_sql_table']) await t.sql(`ALTER TABLE ${t.table('_wsmirror_fields')} DROP COLUMN "${column}"`);
    // Tables of older mirrors declared _synced_at NOT NULL.
    if (dialect === 'postgres') await t.sql(`ALTER TABLE ${t.table('crm__deals')} ALTER COLUMN "_synced_at" SET NOT NULL`);
    else await rewriteSqliteTable(t.url, 'crm__deals', (ddl) => ddl.replace('"_synced_at" TEXT', '"_synced_at" TEXT NOT NULL'));
    // Older outboxes had an index on the status, and their checks as IN lists.
    await t.sql(`CREATE INDEX "_wsmirror_outbox_status" ON ${t.table('_wsmirror_outbox')} ("status", "next_attempt_at")`);
    if (dialect === 'sqlite') {
      await rewriteSqliteTable(t.url, '_wsmirror_outbox', (ddl) => ddl
        .replace(`"operation" = 'insert' OR "operation" = 'update' OR "operation" = 'delete'`, `"operation" IN ('insert', 'update', 'delete')`)
        .replace(`"status" = 'pending' OR "status" = 'failed' OR "status" = 'conflict'`, `"status" IN ('pending', 'failed', 'conflict')`));
    }
    await expect(t.sql(`INSERT INTO ${t.table('crm__deals')} ("title") VALUES ('refused')`)).rejects.toThrow(/null/i);
    await t.sql(`UPDATE ${t.table('_wsmirror_meta')} SET "value" = '1' WHERE "key" = 'catalog_version'`);
    await t.sql(`DELETE FROM ${t.table('_wsmirror_meta')} WHERE "key" = 'capture_version'`);
    await t.sql(`UPDATE ${t.table('crm__deals')} SET "title" = 'before' WHERE "id" = 1`);
    expect(await outbox(t)).toEqual([]);

    const again = await t.reopen();
    const [version] = await t.sql<{ value: string }>(`SELECT "value" FROM ${t.table('_wsmirror_meta')} WHERE "key" = 'catalog_version'`);
    expect(version!.value).toBe(String(CATALOG_VERSION));
    await again.setTableState('t1', { currentAsOf: '2026-01-01T00:00:00.000Z', lastError: { code: 'X', message: 'm', at: '2026-01-01T00:00:01.000Z' } });
    expect((await again.readSyncState()).tables.find((r) => r.tableId === 't1')).toEqual({
      tableId: 't1', currentAsOf: '2026-01-01T00:00:00.000Z', lastError: { code: 'X', message: 'm', at: '2026-01-01T00:00:01.000Z' },
    });
    await t.sql(`UPDATE ${t.table('crm__deals')} SET "title" = 'after' WHERE "id" = 1`);
    const entries = await t.sql<{ sending_since: unknown; column_name: string }>(`SELECT "sending_since", "column_name" FROM ${t.table('_wsmirror_outbox')}`);
    expect(entries).toEqual([{ sending_since: null, column_name: 'title' }]);
    // Layout 5: no status index; the checks still hold (on SQLite, restated without IN lists).
    const indexes = dialect === 'postgres'
      ? await t.sql<{ name: string }>(
        `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = $1::regclass`, [t.table('_wsmirror_outbox')],
      )
      : await t.sql<{ name: string }>(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = '_wsmirror_outbox'`);
    expect(indexes.map((i) => i.name)).not.toContain('_wsmirror_outbox_status');
    expect(indexes.map((i) => i.name)).toContain('_wsmirror_outbox_record');
    if (dialect === 'sqlite') {
      const [outboxDdl] = await t.sql<{ sql: string }>(`SELECT sql FROM sqlite_schema WHERE name = '_wsmirror_outbox'`);
      expect(outboxDdl!.sql).not.toMatch(/ IN \(/);
    }
    await expect(t.sql(`UPDATE ${t.table('_wsmirror_outbox')} SET "status" = 'sent'`)).rejects.toThrow(/check/i);
    await expect(t.sql(`UPDATE ${t.table('_wsmirror_outbox')} SET "operation" = 'upsert'`)).rejects.toThrow(/check/i);
    // The upgrade lets a plain INSERT through, and keeps the rows and their values.
    await t.sql(`INSERT INTO ${t.table('crm__deals')} ("title") VALUES ('taken')`);
    const rows = await t.sql<{ title: string }>(`SELECT "title" FROM ${t.table('crm__deals')} ORDER BY "title"`);
    expect(rows.map((r) => r.title)).toEqual(['after', 'b', 'taken']);
    await again.close();
  });
});

forEachDialect('capture version 2 → current', ({ fresh, dialect }) => {
  it('replaces the triggers of an older capture set-up, so each changed column is recorded once', async () => {
    const t = await seeded(fresh);
    const deals = t.table('crm__deals');
    if (dialect === 'sqlite') {
      // Capture version 2 captured every UPDATE with one trigger per table.
      await t.sql(`CREATE TRIGGER "_wsmirror_capture_crm__deals_u" AFTER UPDATE ON ${deals} BEGIN
        INSERT INTO "_wsmirror_outbox" ("table_id", "sql_table", "record_id", "operation", "column_name", "field_id", "old_value", "new_value")
        SELECT 't1', 'crm__deals', NEW."id", 'update', 'title', 'fa', json_quote(OLD."title"), json_quote(NEW."title") WHERE NEW."title" IS NOT OLD."title";
      END`);
    }
    await t.sql(`UPDATE ${t.table('_wsmirror_meta')} SET "value" = '2' WHERE "key" = 'capture_version'`);
    const again = await t.reopen();
    await t.sql(`UPDATE ${deals} SET "title" = 'once' WHERE "id" = 1`);
    expect((await outbox(t)).map((e) => [e.record_id, e.column_name, e.new_value])).toEqual([[1, 'title', 'once']]);
    await again.close();
  });
});

forEachDialect('pulls next to local edits', ({ fresh }) => {
  it('never overwrites a column with an outbox entry, nor a row with a local insert or delete', async () => {
    const t = await seeded(fresh);
    await t.mirror.applyRows('t1', { upserts: [{ id: 3, values: { title: 'c', amount: 3 } }, { id: 4, values: { title: 'd', amount: 4 } }] });
    const deals = t.table('crm__deals');
    await t.sql(`UPDATE ${deals} SET "title" = 'local title' WHERE "id" = 1`);
    await t.sql(`UPDATE ${deals} SET "amount" = 22 WHERE "id" = 2`);
    await t.sql(`UPDATE ${t.table('_wsmirror_outbox')} SET "status" = 'failed' WHERE "record_id" = 2`);
    await t.sql(`DELETE FROM ${deals} WHERE "id" = 3`);
    await t.sql(`UPDATE ${deals} SET "amount" = 44 WHERE "id" = 4`);
    await t.sql(`UPDATE ${t.table('_wsmirror_outbox')} SET "status" = 'conflict' WHERE "record_id" = 4`);
    await t.sql(`INSERT INTO ${deals} ("title", "_synced_at") VALUES ('local new', '2026-01-01T00:00:00.000Z')`);
    const before = await outbox(t);

    await t.mirror.applyRows('t1', {
      upserts: [
        { id: 1, values: { title: 'upstream title', amount: 100, won: true, total: 1, tags: null } },
        { id: 2, values: { title: 'b2', amount: 200, won: false, total: 2, tags: null } },
        { id: 3, values: { title: 'c2', amount: 300, won: false, total: 3, tags: null } },
        { id: 5, values: { title: 'e', amount: 5, won: false, total: 5, tags: null } },
      ],
      deletes: [4],
    });
    const rows = await t.sql<{ id: unknown; title: string; amount: number }>(`SELECT "id", "title", "amount" FROM ${deals} ORDER BY "id"`);
    const negative = rows.filter((r) => Number(r.id) < 0);
    expect(negative.map((r) => r.title)).toEqual(['local new']);
    expect(rows.filter((r) => Number(r.id) > 0).map((r) => [Number(r.id), r.title, Number(r.amount)])).toEqual([
      [1, 'local title', 100], // title has a pending edit; amount is upstream's
      [2, 'b2', 22], // amount has a failed edit
      // 3: deleted locally, not brought back
      [4, 'd', 44], // a conflicting edit keeps the row from the upstream delete
      [5, 'e', 5],
    ]);
    expect(await outbox(t)).toEqual(before);
  });
});
