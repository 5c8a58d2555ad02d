import { expect, it } from 'vitest';
import { DIALECTS } from '../../src/mirror/dialects.ts';
import { MirrorError, MirrorValueError } from '../../src/mirror/errors.ts';
import { recordCursorKey } from '../../src/mirror/catalog.ts';
import { forEachDialect } from '../helpers/dialects.ts';
import type { TestMirror } from '../helpers/dialects.ts';
import { EVERY_TYPE, field, module, sync, table, workspace } from './fixtures.ts';

const TYPES_WS = workspace(
  module('m1', 'lab', [table('t_types', 'types', EVERY_TYPE.map((t, i) => field(`f${i}`, `f_${t.type}`, t.type)))]),
);

const SIMPLE_WS = workspace(
  module('m1', 'crm', [
    table('t1', 'deals', [field('fa', 'title', 'string'), field('fb', 'amount', 'number'), field('fc', 'won', 'boolean')]),
  ]),
);

function typesRecord(id: number) {
  return { id: String(id), values: Object.fromEntries(EVERY_TYPE.map((t) => [`f_${t.type}`, t.value])) };
}

/** The expected stored SQL value of each type, as the plain client returns it. */
function expectedSql(t: TestMirror, type: string, value: unknown): unknown {
  const pg = t.dialect === 'postgres';
  if (value === null) return null;
  switch (type) {
    case 'boolean': return pg ? value : value ? 1 : 0;
    case 'number': case 'reference': return pg && type === 'reference' ? String(value) : value;
    case 'date': return value; // selected as text below on Postgres
    case 'appointment': return pg ? true : value; // on Postgres, compared as a tstzrange below
    case 'timestamp': return pg ? new Date(value as string) : value;
    case 'any': case 'unknown': case 'multi': case 'dmulti': case 'function': case 'lambda': case 'reverse': case 'rowId': case 'void':
      return pg ? value : JSON.stringify(value);
    default: return value;
  }
}

forEachDialect('mirror rows', ({ fresh }) => {
  it('stores every field type as its SQL type and value, and reads it back exactly', async () => {
    const t = await fresh();
    await sync(t.mirror, TYPES_WS);
    const res = await t.mirror.applyRows('t_types', { upserts: [typesRecord(1)] });
    expect(res).toEqual({ upserted: 1, deleted: 0 });

    const [row] = await t.sql<Record<string, unknown>>(
      t.dialect === 'postgres'
        ? `SELECT *, "f_date"::text AS "date_text",
             "f_appointment" = tstzrange('2026-01-31T09:00:00Z', '2026-01-31T10:30:00Z') AS "appointment_same" FROM ${t.table('lab__types')}`
        : `SELECT * FROM ${t.table('lab__types')}`,
    );
    expect(row).toBeDefined();
    for (const { type, value } of EVERY_TYPE) {
      const column = `f_${type}`;
      const actual = t.dialect !== 'postgres' ? row![column]
        : type === 'date' ? row!['date_text'] : type === 'appointment' ? row!['appointment_same'] : row![column];
      expect(actual, `${type} stored`).toEqual(expectedSql(t, type, value));
    }
    expect(row!['id']).toEqual(t.dialect === 'postgres' ? '1' : 1);

    const [back] = await t.mirror.readRows('t_types', [1]);
    expect(back).toEqual(typesRecord(1));
  });

  it('replaces whole rows, keeps the last of repeated ids, deletes by id and sets _synced_at', async () => {
    const t = await fresh();
    await sync(t.mirror, SIMPLE_WS);
    const before = Date.now();
    await t.mirror.applyRows('t1', {
      upserts: [
        { id: 1, values: { title: 'a', amount: 1, won: false } },
        { id: '2', values: { title: 'b', amount: 2 } },
        { id: 3, values: { title: 'c' } },
      ],
    });
    const res = await t.mirror.applyRows('t1', {
      upserts: [
        { id: 1, values: { title: 'a2' } },
        { id: 2, values: { title: 'first' } },
        { id: 2, values: { title: 'second', amount: 22, extra_unknown_field: 'x' } },
      ],
      deletes: [3, '99'],
    });
    expect(res).toEqual({ upserted: 2, deleted: 1 });
    const rows = await t.sql<{ id: unknown; title: string; amount: number | null; won: unknown; _synced_at: unknown }>(
      `SELECT * FROM ${t.table('crm__deals')} ORDER BY "id"`,
    );
    expect(rows.map((r) => [Number(r.id), r.title, r.amount, r.won])).toEqual([
      [1, 'a2', null, null],
      [2, 'second', 22, null],
    ]);
    for (const r of rows) {
      const at = new Date(r._synced_at as string).getTime();
      expect(at).toBeGreaterThanOrEqual(before - 1000);
      expect(at).toBeLessThanOrEqual(Date.now() + 1000);
    }
  });

  it('writes rows encoded page by page as one batch: the last of a repeated id wins, across pages too', async () => {
    const t = await fresh();
    await sync(t.mirror, SIMPLE_WS);
    let rows = await t.mirror.encodeRows('t1', [{ id: 1, values: { title: 'a', amount: 1, won: true } }, { id: 2, values: { title: 'b' } }]);
    rows = await t.mirror.encodeRows('t1', [{ id: 3, values: { title: 'tab\there, line\nbreak, back\\slash' } }, { id: 1, values: { title: 'a2', amount: 1.5 } }], rows);
    expect(rows.count).toBe(3);
    const res = await t.mirror.applyRows('t1', { encoded: rows, upserts: [{ id: 2, values: { title: 'b2', won: false } }] });
    expect(res).toEqual({ upserted: 3, deleted: 0 });
    const stored = await t.sql<{ id: unknown; title: string; amount: number | null; won: unknown }>(
      `SELECT "id", "title", "amount", "won" FROM ${t.table('crm__deals')} ORDER BY "id"`,
    );
    const no = t.dialect === 'postgres' ? false : 0;
    expect(stored.map((r) => [Number(r.id), r.title, r.amount, r.won])).toEqual([
      [1, 'a2', 1.5, null],
      [2, 'b2', null, no],
      [3, 'tab\there, line\nbreak, back\\slash', null, null],
    ]);
  });

  it('keeps the last of each id whether the ids of a batch ascend or not', async () => {
    const t = await fresh();
    await sync(t.mirror, SIMPLE_WS);
    // 5, 7 ascend (a scan); 7 and 5 repeat in order; 3 is the first id out of order (a change
    // feed); then repeats of ids from before and after it.
    let rows = await t.mirror.encodeRows('t1', [{ id: 5, values: { title: 'five' } }, { id: 7, values: { title: 'seven' } }]);
    rows = await t.mirror.encodeRows('t1', [
      { id: 7, values: { title: 'seven-2' } }, { id: 5, values: { title: 'five-2' } }, { id: 3, values: { title: 'three' } },
      { id: 9, values: { title: 'nine' } }, { id: 5, values: { title: 'five-3' } }, { id: 3, values: { title: 'three-2' } },
    ], rows);
    expect(rows.count).toBe(4);
    expect(await t.mirror.applyRows('t1', { encoded: rows })).toEqual({ upserted: 4, deleted: 0 });
    const stored = await t.sql<{ id: unknown; title: string }>(`SELECT "id", "title" FROM ${t.table('crm__deals')} ORDER BY "id"`);
    expect(stored.map((r) => [Number(r.id), r.title])).toEqual([[3, 'three-2'], [5, 'five-3'], [7, 'seven-2'], [9, 'nine']]);
  });

  it('writes a batch above the table\'s highest id as any other, and keeps a pending local delete of the highest row', async () => {
    const t = await fresh();
    await sync(t.mirror, SIMPLE_WS);
    const titles = async () => (await t.sql<{ id: unknown; title: string }>(`SELECT "id", "title" FROM ${t.table('crm__deals')} ORDER BY "id"`))
      .map((r) => [Number(r.id), r.title]);
    // Into an empty table, then above its highest id (Postgres copies these straight in).
    await t.mirror.applyRows('t1', { upserts: [{ id: 1, values: { title: 'a' } }, { id: 2, values: { title: 'b' } }] });
    await t.mirror.applyRows('t1', { upserts: [{ id: 5, values: { title: 'e' } }, { id: 3, values: { title: 'c' } }] });
    // Among the rows: an upsert.
    await t.mirror.applyRows('t1', { upserts: [{ id: 4, values: { title: 'd' } }, { id: 6, values: { title: 'f' } }, { id: 1, values: { title: 'a2' } }] });
    expect(await titles()).toEqual([[1, 'a2'], [2, 'b'], [3, 'c'], [4, 'd'], [5, 'e'], [6, 'f']]);
    // Row 6, the highest, deleted locally and not pushed yet: a pull that reads it again (with
    // a row above it) leaves it deleted.
    await t.sql(`DELETE FROM ${t.table('crm__deals')} WHERE "id" = 6`);
    await t.mirror.applyRows('t1', { upserts: [{ id: 6, values: { title: 'f2' } }, { id: 7, values: { title: 'g' } }] });
    expect(await titles()).toEqual([[1, 'a2'], [2, 'b'], [3, 'c'], [4, 'd'], [5, 'e'], [7, 'g']]);
  });

  it('refuses rows encoded before the table\'s columns changed, and rows of another table', async () => {
    const t = await fresh();
    await sync(t.mirror, SIMPLE_WS);
    const rows = await t.mirror.encodeRows('t1', [{ id: 1, values: { title: 'a' } }]);
    await sync(t.mirror, workspace(module('m1', 'crm', [
      table('t1', 'deals', [field('fa', 'title', 'string'), field('fb', 'amount', 'number'), field('fc', 'won', 'boolean'), field('fd', 'note', 'string')]),
      table('t2', 'other', [field('fe', 'title', 'string')]),
    ])));
    await expect(t.mirror.applyRows('t1', { encoded: rows })).rejects.toThrow(/columns changed/);
    await expect(t.mirror.applyRows('t2', { encoded: rows })).rejects.toThrow(MirrorError);
    expect(await t.mirror.countRows('t1')).toBe(0);
  });

  it('commits the cursor with the rows, and neither when the batch fails', async () => {
    const t = await fresh();
    await sync(t.mirror, SIMPLE_WS);
    const key = recordCursorKey('t1');
    await t.mirror.applyRows('t1', {
      upserts: [{ id: 1, values: { title: 'kept' } }],
      cursors: { [key]: '2026-01-01T00:00:00.000Z' },
    });
    expect(await t.mirror.getCursor(key)).toBe('2026-01-01T00:00:00.000Z');

    // A trigger added by another client makes the database itself fail on row 777, midway.
    await failInsertOf(t, 777);
    const upserts = Array.from({ length: 1000 }, (_, i) => ({ id: i + 2, values: { title: `r${i + 2}`, amount: i } }));
    await expect(
      t.mirror.applyRows('t1', { upserts, deletes: [1], cursors: { [key]: '2026-02-02T00:00:00.000Z' }, state: 'ready' }),
    ).rejects.toThrow(/boom/);

    const rows = await t.sql<{ id: unknown; title: string }>(`SELECT "id", "title" FROM ${t.table('crm__deals')}`);
    expect(rows.map((r) => [Number(r.id), r.title])).toEqual([[1, 'kept']]);
    expect(await t.mirror.getCursor(key)).toBe('2026-01-01T00:00:00.000Z');
    const [state] = await t.sql<{ state: string }>(`SELECT "state" FROM ${t.table('_wsmirror_tables')}`);
    expect(state!.state).toBe('needs_backfill');

    // The mirror is still usable after the rollback.
    await t.mirror.applyRows('t1', { upserts: [{ id: 5, values: { title: 'five' } }], state: 'ready' });
    expect(await t.mirror.countRows('t1')).toBe(2);
    expect((await t.mirror.readCatalog()).tables[0]!.state).toBe('ready');
  });

  it('writes again after a failed first batch (nothing it set up survives the rollback)', async () => {
    const t = await fresh();
    await sync(t.mirror, SIMPLE_WS);
    await failInsertOf(t, 3);
    const upserts = [1, 2, 3].map((id) => ({ id, values: { title: `r${id}` } }));
    await expect(t.mirror.applyRows('t1', { upserts })).rejects.toThrow(/boom/);
    for (let i = 0; i < 3; i++) {
      await t.mirror.applyRows('t1', { upserts: [{ id: 10 + i, values: { title: 'after' } }] });
    }
    expect(await t.mirror.countRows('t1')).toBe(3);
  });

  it('rejects a bad value before writing anything, naming table, record and field', async () => {
    const t = await fresh();
    await sync(t.mirror, SIMPLE_WS);
    const bad = t.mirror.applyRows('t1', {
      upserts: [{ id: 1, values: { title: 'ok' } }, { id: 2, values: { amount: 'twelve' } }],
    });
    await expect(bad).rejects.toBeInstanceOf(MirrorValueError);
    await expect(bad).rejects.toThrow(/crm__deals record 2, field amount/);
    await expect(t.mirror.applyRows('t1', { deletes: ['x1'] })).rejects.toThrow(/not a record id/);
    await expect(t.mirror.applyRows('nope', { deletes: [1] })).rejects.toBeInstanceOf(MirrorError);
    expect(await t.mirror.countRows('t1')).toBe(0);
  });

  it('streams ids in order, page by page, and counts rows', async () => {
    const t = await fresh();
    await sync(t.mirror, SIMPLE_WS);
    const ids = Array.from({ length: 95 }, (_, i) => (i * 7919) % 100_003 + 1);
    await t.mirror.applyRows('t1', { upserts: ids.map((id) => ({ id, values: { title: String(id) } })) });
    const seen: number[] = [];
    for await (const id of t.mirror.streamIds('t1', { pageSize: 10 })) seen.push(id);
    expect(seen).toEqual([...ids].sort((a, b) => a - b));
    const after: number[] = [];
    for await (const id of t.mirror.streamIds('t1', { after: seen[89]!, pageSize: 3 })) after.push(id);
    expect(after).toEqual(seen.slice(90));
    expect(await t.mirror.countRows('t1')).toBe(95);
  });

  it('gets, sets and deletes cursors outside row writes', async () => {
    const t = await fresh();
    expect(await t.mirror.getCursor('schema')).toBeUndefined();
    await t.mirror.setCursor('schema', 'a');
    await t.mirror.setCursor('schema', 'b');
    expect(await t.mirror.getCursor('schema')).toBe('b');
    const rows = await t.sql<{ name: string; value: string }>(`SELECT "name", "value" FROM ${t.table('_wsmirror_cursors')}`);
    expect(rows).toEqual([{ name: 'schema', value: 'b' }]);
    await t.mirror.setCursor('schema', null);
    expect(await t.mirror.getCursor('schema')).toBeUndefined();
  });

  it('marks its own write transactions so triggers can tell them from other clients', async () => {
    const t = await fresh();
    await sync(t.mirror, SIMPLE_WS);
    await t.mirror.applyRows('t1', { upserts: [{ id: 1, values: { title: 'a' } }] });
    // What the outbox triggers will do: capture only writes that are not the daemon's.
    await t.sql(`CREATE TABLE ${t.table('captured')} ("id" bigint, "title" text)`);
    if (t.dialect === 'postgres') {
      await t.sql(`CREATE FUNCTION ${t.table('capture')}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NOT (${DIALECTS.postgres.daemonWriteCondition({ qualify: t.table })}) THEN
          INSERT INTO ${t.table('captured')} VALUES (NEW.id, NEW.title); END IF; RETURN NEW; END $$`);
      // Executable by its owner only: a trigger of the daemon's own role (postgres/foreign-triggers.ts).
      await t.sql(`REVOKE ALL ON FUNCTION ${t.table('capture')}() FROM PUBLIC`);
      await t.sql(`CREATE TRIGGER capture AFTER UPDATE ON ${t.table('crm__deals')} FOR EACH ROW EXECUTE FUNCTION ${t.table('capture')}()`);
    } else {
      await t.sql(`CREATE TRIGGER capture AFTER UPDATE ON "crm__deals" WHEN NOT (${DIALECTS.sqlite.daemonWriteCondition({ qualify: t.table })})
        BEGIN INSERT INTO "captured" VALUES (NEW.id, NEW.title); END`);
    }
    await t.mirror.applyRows('t1', { upserts: [{ id: 1, values: { title: 'from daemon' } }] });
    await t.sql(`UPDATE ${t.table('crm__deals')} SET "title" = 'from a BI user' WHERE "id" = 1`);
    const captured = await t.sql<{ id: unknown; title: string }>(`SELECT * FROM ${t.table('captured')}`);
    expect(captured.map((r) => [Number(r.id), r.title])).toEqual([[1, 'from a BI user']]);
    if (t.dialect === 'sqlite') {
      expect(await t.sql(`SELECT * FROM "_wsmirror_writer"`)).toEqual([]);
    }
  });

  it('never shows a concurrent reader half a batch: rows and cursor appear together', async () => {
    const t = await fresh();
    await sync(t.mirror, SIMPLE_WS);
    const key = recordCursorKey('t1');
    const observe = async () => {
      // One statement, one snapshot.
      const [o] = await t.sql<{ n: unknown; c: string | null }>(
        `SELECT (SELECT count(*) FROM ${t.table('crm__deals')}) AS "n",
                (SELECT "value" FROM ${t.table('_wsmirror_cursors')} WHERE "name" = '${key}') AS "c"`,
      );
      return `${Number(o!.n)}@${o!.c}`;
    };
    const seen = new Set<string>();
    for (let page = 1; page <= 4; page++) {
      const upserts = Array.from({ length: 5000 }, (_, i) => ({ id: (page - 1) * 5000 + i + 1, values: { title: `p${page}`, amount: i } }));
      let done = false;
      const write = t.mirror.applyRows('t1', { upserts, cursors: { [key]: `page${page}` } }).finally(() => { done = true; });
      while (!done) {
        seen.add(await observe());
        await new Promise((r) => setImmediate(r));
      }
      await write;
      seen.add(await observe());
    }
    const allowed = new Set(['0@null', '5000@page1', '10000@page2', '15000@page3', '20000@page4']);
    for (const s of seen) expect(allowed, s).toContain(s);
    expect(seen).toContain('20000@page4');
  });

  it('applies large batches (bulk path) exactly', async () => {
    const t = await fresh();
    await sync(t.mirror, TYPES_WS);
    const upserts = Array.from({ length: 3000 }, (_, i) => typesRecord(i + 1));
    upserts[1234]!.values['f_string'] = 'line1\r\nline2\t\\N\\';
    upserts[1235]!.values['f_string'] = '\\N';
    upserts[1236]!.values['f_string'] = null;
    await t.mirror.applyRows('t_types', { upserts });
    await t.mirror.applyRows('t_types', { upserts }); // every row now conflicts
    expect(await t.mirror.countRows('t_types')).toBe(3000);
    const back = await t.mirror.readRows('t_types', [1235, 1236, 1237, 3000, 4000]);
    expect(back).toEqual([upserts[1234], upserts[1235], upserts[1236], upserts[2999]]);
    const [nulls] = await t.sql<{ n: unknown }>(`SELECT count(*) AS "n" FROM ${t.table('lab__types')} WHERE "f_string" IS NULL`);
    expect(Number(nulls!.n)).toBe(1);
  });
});

/** Adds a trigger, as another SQL client could, that makes inserting record `id` into crm__deals fail with "boom". */
async function failInsertOf(t: TestMirror, id: number): Promise<void> {
  if (t.dialect === 'postgres') {
    await t.sql(`CREATE FUNCTION ${t.table('boom')}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.id = ${id} THEN RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END $$`);
    // Of the daemon's own role (postgres/foreign-triggers.ts): the daemon's writes run it.
    await t.sql(`REVOKE ALL ON FUNCTION ${t.table('boom')}() FROM PUBLIC`);
    await t.sql(`CREATE TRIGGER boom BEFORE INSERT ON ${t.table('crm__deals')} FOR EACH ROW EXECUTE FUNCTION ${t.table('boom')}()`);
  } else {
    await t.sql(`CREATE TRIGGER boom BEFORE INSERT ON "crm__deals" WHEN NEW.id = ${id} BEGIN SELECT RAISE(ABORT, 'boom'); END`);
  }
}
