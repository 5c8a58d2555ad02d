import { expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import type { TestMirror } from '../helpers/dialects.ts';
import { field, module, sync, table, workspace } from './fixtures.ts';

/**
 * The outbox operations the push uses, over edits made through a separate SQL connection:
 * reading them coalesced per record, marking them as being sent, settling outcomes (including a
 * created record's upstream id replacing its temporary one everywhere), listing, retrying and
 * discarding.
 */
const WS = workspace(module('m1', 'crm', [
  table('t1', 'deals', [
    field('fa', 'title', 'string'), field('fb', 'amount', 'number'), field('fc', 'won', 'boolean'),
    field('fd', 'due', 'date'), field('fe', 'total', 'function'), field('ff', 'tags', 'multi'),
  ]),
  table('t2', 'notes', [field('ga', 'body', 'string'), field('gb', 'deal', 'reference', { refTableId: 't1' })]),
]));

const NOW = '2030-01-01T00:00:00.000Z';

async function seeded(fresh: () => Promise<TestMirror>): Promise<TestMirror> {
  const t = await fresh();
  await sync(t.mirror, WS);
  await t.mirror.applyRows('t1', {
    upserts: [
      { id: 1, values: { title: 'a', amount: 1, won: false, due: '2026-01-01', total: 10, tags: ['x'] } },
      { id: 2, values: { title: 'b', amount: 2, won: true, due: null, total: 20, tags: null } },
      { id: 3, values: { title: 'c', amount: 3, won: true, due: null, total: 30, tags: null } },
    ],
  });
  await t.mirror.applyRows('t2', { upserts: [{ id: 10, values: { body: 'n', deal: 1 } }] });
  return t;
}

const stamp = () => new Date().toISOString();

async function entries(t: TestMirror) {
  return (await t.sql<{ entry_id: unknown; record_id: unknown; operation: string; status: string; attempts: number; last_error: string | null }>(
    `SELECT "entry_id", "record_id", "operation", "status", "attempts", "last_error" FROM ${t.table('_wsmirror_outbox')} ORDER BY "entry_id"`,
  )).map((r) => ({ ...r, entry_id: Number(r.entry_id), record_id: Number(r.record_id), attempts: Number(r.attempts) }));
}

forEachDialect('outbox operations', ({ fresh }) => {
  it('reads pending edits coalesced per record, decoded to API shapes, oldest first', async () => {
    const t = await seeded(fresh);
    const deals = t.table('crm__deals');
    const p = t.dialect === 'postgres' ? (n: number) => `$${n}` : () => '?';
    await t.sql(`UPDATE ${deals} SET "title" = 'a1', "won" = ${t.dialect === 'postgres' ? 'true' : '1'}, "due" = '2026-02-03' WHERE "id" = 1`);
    await t.sql(`UPDATE ${deals} SET "title" = 'a2', "tags" = ${p(1)} WHERE "id" = 1`, [JSON.stringify(['y'])]);
    await t.sql(`DELETE FROM ${deals} WHERE "id" = 2`);
    await t.sql(`INSERT INTO ${deals} ("title", "amount", "_synced_at") VALUES ('new', 5, ${p(1)})`, [stamp()]);
    const [created] = await t.sql<{ id: unknown }>(`SELECT "id" FROM ${deals} WHERE "title" = 'new'`);
    const newId = Number(created!.id);
    await t.sql(`UPDATE ${deals} SET "amount" = 6 WHERE "id" = ${newId}`);
    await t.sql(`INSERT INTO ${deals} ("title", "_synced_at") VALUES ('gone', ${p(1)})`, [stamp()]);
    await t.sql(`DELETE FROM ${deals} WHERE "title" = 'gone'`);

    const edits = await t.mirror.readPendingEdits({ now: NOW, limit: 10 });
    expect(edits.map((e) => [e.operation, e.recordId < 0 ? 'new' : e.recordId])).toEqual([
      ['update', 1], ['delete', 2], ['create', 'new'], ['delete', 'new'],
    ]);
    const [update, del, create] = edits;
    expect(Object.fromEntries(update!.values)).toEqual({ title: 'a2', won: true, due: '2026-02-03', tags: ['y'] });
    expect(Object.fromEntries(update!.oldValues)).toEqual({ title: 'a', won: false, due: '2026-01-01', tags: ['x'] });
    expect(update!.entryIds).toHaveLength(5);
    expect(update!.fieldEntryIds.get('title')).toHaveLength(2);
    expect(update!.sendingSince).toBeNull();
    expect(update!.attempts).toBe(0);
    expect(del!.entryIds).toHaveLength(1);
    expect(create!.recordId).toBe(newId);
    expect(Object.fromEntries(create!.values)).toEqual({ title: 'new', amount: 6 });
    expect(create!.entryIds).toHaveLength(2);

    const firstTwo = await t.mirror.readPendingEdits({ now: NOW, limit: 2 });
    expect(firstTwo).toHaveLength(2);
    // The records after a round already read: those whose oldest entry follows that round's.
    const after = Math.max(...firstTwo.map((e) => Math.min(...e.entryIds)));
    const rest = await t.mirror.readPendingEdits({ now: NOW, limit: 10, after });
    expect(rest.map((e) => e.recordId)).toEqual(edits.slice(2).map((e) => e.recordId));
    // Not yet due: left out.
    await t.sql(`UPDATE ${t.table('_wsmirror_outbox')} SET "next_attempt_at" = ${p(1)} WHERE "record_id" = 1`, ['2031-01-01T00:00:00.000Z']);
    expect((await t.mirror.readPendingEdits({ now: NOW, limit: 10 })).map((e) => e.recordId)).not.toContain(1);
  });

  it('reads in rounds that each hold whole records, every record once, whatever order their entries were captured in', async () => {
    const t = await seeded(fresh);
    const deals = t.table('crm__deals');
    // Records whose entries interleave: deal 1's second edit comes after deals 2 and 3 and the
    // note, so a read of one record at a time must find it beyond the entries it walked.
    await t.sql(`UPDATE ${deals} SET "title" = 'a1' WHERE "id" = 1`);
    await t.sql(`UPDATE ${deals} SET "title" = 'b1' WHERE "id" = 2`);
    await t.sql(`UPDATE ${deals} SET "amount" = 33 WHERE "id" = 3`);
    await t.sql(`UPDATE ${deals} SET "amount" = 11 WHERE "id" = 1`);
    await t.sql(`UPDATE ${t.table('crm__notes')} SET "body" = 'n1' WHERE "id" = 10`);
    await t.sql(`UPDATE ${deals} SET "title" = 'b2', "amount" = 22 WHERE "id" = 2`);
    const all = await t.mirror.readPendingEdits({ now: NOW, limit: 10 });
    expect(all.map((e) => [e.recordId, e.entryIds.length])).toEqual([[1, 2], [2, 3], [3, 1], [10, 1]]);

    for (const size of [1, 2, 3]) {
      const rounds: number[][][] = [];
      let after: number | undefined;
      for (;;) {
        const round = await t.mirror.readPendingEdits({ now: NOW, limit: size, ...(after !== undefined ? { after } : {}) });
        if (round.length === 0) break;
        expect(round.length).toBeLessThanOrEqual(size);
        rounds.push(round.map((e) => [e.recordId, ...e.entryIds]));
        after = Math.max(...round.map((e) => Math.min(...e.entryIds)));
      }
      expect(rounds.flat(), `rounds of ${size}`).toEqual(all.map((e) => [e.recordId, ...e.entryIds]));
      // Deal 1's late entry makes a walk from after deal 3 meet it first: that round skips the
      // record (an earlier round's) and still reads the note.
      if (size === 1) expect(rounds.map((r) => r.map(([id]) => id))).toEqual([[1], [2], [3], [10]]);
    }
  });

  it('reads a large outbox a bulk UPDATE just filled; on Postgres the first read lets the planner know its size', async () => {
    const t = await seeded(fresh);
    const deals = t.table('crm__deals');
    await t.mirror.applyRows('t1', { upserts: Array.from({ length: 20_000 }, (_, i) => ({ id: i + 100, values: { title: `d${i}`, amount: i } })) });
    /** The planner's idea of the outbox's size (Postgres; -1: never analyzed). */
    const estimate = async () => t.dialect === 'postgres'
      ? Number((await t.sql<{ n: unknown }>(`SELECT reltuples AS "n" FROM pg_class WHERE oid = '${t.table('_wsmirror_outbox')}'::regclass`))[0]!.n)
      : undefined;
    await t.sql(`UPDATE ${deals} SET "amount" = "amount" + 1 WHERE "id" >= 100 AND "id" < 200`);
    const before = await estimate();
    expect(await t.mirror.readPendingEdits({ now: NOW, limit: 5000 })).toHaveLength(100);
    // A small outbox is left as the planner has it.
    expect(await estimate()).toBe(before);

    await t.sql(`UPDATE ${deals} SET "title" = "title" || '!' WHERE "id" >= 100`);
    const edits = await t.mirror.readPendingEdits({ now: NOW, limit: 5000 });
    expect(edits).toHaveLength(5000);
    expect(edits[0]!.entryIds).toHaveLength(2);
    if (t.dialect === 'postgres') {
      expect(before).toBeLessThan(1000);
      expect(await estimate()).toBeGreaterThan(15_000);
    }
  });

  it('marks entries as being sent, and settles pushed, failed, conflict, retry and discarded outcomes', async () => {
    const t = await seeded(fresh);
    const deals = t.table('crm__deals');
    await t.sql(`UPDATE ${deals} SET "title" = 'x' WHERE "id" = 1`);
    await t.sql(`UPDATE ${deals} SET "title" = 'y' WHERE "id" = 2`);
    await t.sql(`UPDATE ${deals} SET "title" = 'z' WHERE "id" = 3`);
    await t.sql(`DELETE FROM ${t.table('crm__notes')} WHERE "id" = 10`);
    const [e1, e2, e3, e4] = await t.mirror.readPendingEdits({ now: NOW, limit: 10 });
    await t.mirror.markSending([{ entryIds: e1!.entryIds, body: {} }, { entryIds: e2!.entryIds, body: {} }], '2029-12-31T23:59:00.000Z');
    const again = await t.mirror.readPendingEdits({ now: NOW, limit: 10 });
    expect(again.map((e) => e.sendingSince)).toEqual(['2029-12-31T23:59:00.000Z', '2029-12-31T23:59:00.000Z', null, null]);

    await t.mirror.settleEdits([
      { kind: 'pushed', entryIds: e1!.entryIds },
      { kind: 'failed', entryIds: e2!.entryIds, message: 'title: too long' },
      { kind: 'retry', entryIds: e3!.entryIds, message: '503', nextAttemptAt: '2031-01-01T00:00:00.000Z' },
      { kind: 'conflict', entryIds: e4!.entryIds, message: 'deleted upstream' },
    ]);
    expect((await entries(t)).map((e) => [e.record_id, e.status, e.attempts, e.last_error])).toEqual([
      [2, 'failed', 1, 'title: too long'],
      [3, 'pending', 1, '503'],
      [10, 'conflict', 1, 'deleted upstream'],
    ]);
    expect(await t.mirror.readPendingEdits({ now: NOW, limit: 10 })).toEqual([]);
    expect((await t.mirror.readPendingEdits({ now: '2031-01-01T00:00:00.000Z', limit: 10 })).map((e) => e.recordId)).toEqual([3]);
    const listed = await t.mirror.listOutbox({ statuses: ['failed'] });
    expect(listed).toEqual([expect.objectContaining({
      tableId: 't1', sqlTable: 'crm__deals', recordId: 2, operation: 'update', columnName: 'title', fieldName: 'title',
      oldValue: 'b', newValue: 'y', status: 'failed', attempts: 1, lastError: 'title: too long', nextAttemptAt: null,
    })]);
    expect(await t.mirror.oldestPendingAt()).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));

    expect(await t.mirror.retryOutbox({ tableIds: ['t1'] })).toBe(1);
    expect((await entries(t)).map((e) => [e.record_id, e.status, e.attempts])).toEqual([[2, 'pending', 1], [3, 'pending', 1], [10, 'conflict', 1]]);
    expect(await t.mirror.discardOutbox({ entryIds: (await t.mirror.listOutbox({ statuses: ['conflict'] })).map((e) => e.entryId) }))
      .toEqual([{ tableId: 't2', recordId: 10 }]);
    await t.mirror.settleEdits([{ kind: 'discarded', entryIds: e2!.entryIds }]);
    expect((await entries(t)).map((e) => e.record_id)).toEqual([3]);
  });

  it('binds a created record\'s upstream id into its row, references to it and its remaining entries', async () => {
    const t = await seeded(fresh);
    const deals = t.table('crm__deals');
    const p = t.dialect === 'postgres' ? (n: number) => `$${n}` : () => '?';
    await t.sql(`INSERT INTO ${deals} ("title", "_synced_at") VALUES ('fresh', ${p(1)})`, [stamp()]);
    const [edit] = await t.mirror.readPendingEdits({ now: NOW, limit: 10 });
    const tempId = edit!.recordId;
    expect(tempId).toBeLessThan(0);
    // Edits made after the push read the create: a later update, and a note pointing at the new deal.
    await t.sql(`UPDATE ${deals} SET "amount" = 7 WHERE "id" = ${tempId}`);
    await t.sql(`UPDATE ${t.table('crm__notes')} SET "deal" = ${tempId} WHERE "id" = 10`);
    // A pull brought the upstream record in before the create was settled.
    await t.mirror.applyRows('t1', { upserts: [{ id: 500, values: { title: 'fresh (upstream)' } }] });

    await t.mirror.settleEdits([{ kind: 'pushed', entryIds: edit!.entryIds, createdId: 500 }]);
    const rows = await t.sql<{ id: unknown; title: string; amount: unknown }>(`SELECT "id", "title", "amount" FROM ${deals} WHERE "id" = 500 OR "id" < 0`);
    expect(rows.map((r) => [Number(r.id), r.title, Number(r.amount)])).toEqual([[500, 'fresh', 7]]);
    const [note] = await t.sql<{ deal: unknown }>(`SELECT "deal" FROM ${t.table('crm__notes')} WHERE "id" = 10`);
    expect(Number(note!.deal)).toBe(500);
    const left = await t.mirror.listOutbox({});
    expect(left.map((e) => [e.tableId, e.recordId, e.columnName, e.newValue])).toEqual([
      ['t1', 500, 'amount', 7],
      ['t2', 10, 'deal', 500],
    ]);
    expect((await t.mirror.readPendingEdits({ now: NOW, limit: 10 })).map((e) => [e.operation, e.recordId])).toEqual([['update', 500], ['update', 10]]);
  });

  it('discarding a local insert removes its row and its other entries', async () => {
    const t = await seeded(fresh);
    const deals = t.table('crm__deals');
    const p = t.dialect === 'postgres' ? (n: number) => `$${n}` : () => '?';
    await t.sql(`INSERT INTO ${deals} ("title", "_synced_at") VALUES ('oops', ${p(1)})`, [stamp()]);
    await t.sql(`UPDATE ${deals} SET "amount" = 1 WHERE "title" = 'oops'`);
    const insert = (await t.mirror.listOutbox({})).find((e) => e.operation === 'insert')!;
    expect(await t.mirror.discardOutbox({ entryIds: [insert.entryId] })).toEqual([]);
    expect(await t.sql(`SELECT "id" FROM ${deals} WHERE "id" < 0`)).toEqual([]);
    expect(await t.mirror.listOutbox({})).toEqual([]);
  });

  it('reads, marks and settles thousands of edits at once, in capture order and within the limit', async () => {
    const t = await seeded(fresh);
    const rows = Array.from({ length: 2_500 }, (_, i) => ({ id: 100 + i, values: { title: `r${i}`, amount: i, won: false, due: null, total: 0, tags: null } }));
    await t.mirror.applyRows('t1', { upserts: rows });
    await t.sql(`UPDATE ${t.table('crm__deals')} SET "amount" = "amount" + 1 WHERE "id" >= 100`);
    const firstRound = await t.mirror.readPendingEdits({ now: NOW, limit: 2_000 });
    expect(firstRound).toHaveLength(2_000);
    const all = await t.mirror.readPendingEdits({ now: NOW, limit: 10_000 });
    expect(all).toHaveLength(2_500);
    expect(all.slice(0, 2_000).map((e) => e.recordId)).toEqual(firstRound.map((e) => e.recordId));
    const entryOrder = all.map((e) => e.entryIds[0]!);
    expect(entryOrder).toEqual([...entryOrder].sort((a, b) => a - b));
    for (const e of all) expect(e.values.get('amount')).toBe(e.recordId - 100 + 1);
    const ids = all.flatMap((e) => e.entryIds);
    await t.mirror.markSending(all.map((e) => ({ entryIds: e.entryIds, body: {} })), NOW);
    expect((await t.mirror.readPendingEdits({ now: NOW, limit: 10_000 })).every((e) => e.sendingSince !== null)).toBe(true);
    await t.mirror.settleEdits([{ kind: 'pushed', entryIds: ids.slice(0, 2_400) }, { kind: 'failed', entryIds: ids.slice(2_400), message: 'no' }]);
    const left = await entries(t);
    expect(left).toHaveLength(100);
    expect(left.every((e) => e.status === 'failed' && e.last_error === 'no' && e.attempts === 1)).toBe(true);
  });

  it('keeps the body a create was sent with, and which entries that send covered', async () => {
    const t = await seeded(fresh);
    const deals = t.table('crm__deals');
    await t.sql(`INSERT INTO ${deals} ("title", "amount") VALUES ('new', 5)`);
    const [create] = await t.mirror.readPendingEdits({ now: NOW, limit: 10 });
    expect(create).toMatchObject({ operation: 'create', sendingSince: null, sentEntryIds: [], sentBody: null });
    await t.mirror.markSending([{ entryIds: create!.entryIds, body: { title: 'new', amount: 5 } }], '2029-12-31T23:59:00.000Z');
    // Edited again after the send began: that edit is not part of what was sent.
    await t.sql(`UPDATE ${deals} SET "title" = 'newer' WHERE "id" = ${create!.recordId}`);
    const [again] = await t.mirror.readPendingEdits({ now: NOW, limit: 10 });
    expect(again!.sendingSince).toBe('2029-12-31T23:59:00.000Z');
    expect(again!.sentBody).toEqual({ title: 'new', amount: 5 });
    expect(again!.sentEntryIds).toEqual(create!.entryIds);
    expect(again!.entryIds).toHaveLength(2);
    expect(again!.values.get('title')).toBe('newer');
  });
  it('fails the waiting edits of a field retyped in place upstream (their values were for the old type), and keeps the rest', async () => {
    const t = await seeded(fresh);
    const deals = t.table('crm__deals');
    await t.sql(`UPDATE ${deals} SET "amount" = 7, "title" = 'a1' WHERE "id" = 1`);
    // The same field id, another kind of value: the column is made again and the table re-read.
    await sync(t.mirror, workspace(module('m1', 'crm', [
      table('t1', 'deals', [
        field('fa', 'title', 'string'), field('fb', 'amount', 'string'), field('fc', 'won', 'boolean'),
        field('fd', 'due', 'date'), field('fe', 'total', 'function'), field('ff', 'tags', 'multi'),
      ]),
      table('t2', 'notes', [field('ga', 'body', 'string'), field('gb', 'deal', 'reference', { refTableId: 't1' })]),
    ])));
    const rows = await t.sql<{ column_name: string; status: string; last_error: string | null }>(
      `SELECT "column_name", "status", "last_error" FROM ${t.table('_wsmirror_outbox')} ORDER BY "entry_id"`,
    );
    expect(rows.map((r) => [r.column_name, r.status]).sort()).toEqual([['amount', 'failed'], ['title', 'pending']]);
    expect(rows.find((r) => r.column_name === 'amount')!.last_error).toMatch(/amount changed type upstream \(number to string\)/);
    const [edit] = await t.mirror.readPendingEdits({ now: NOW, limit: 10 });
    expect([...edit!.values]).toEqual([['title', 'a1']]);
  });
  it('holds back the create of a row inserted here whose value of a field retyped upstream the rebuild cleared, naming the value', async () => {
    const t = await seeded(fresh);
    const deals = t.table('crm__deals');
    await t.sql(`INSERT INTO ${deals} ("title", "amount") VALUES ('kept', 7)`);
    await t.sql(`INSERT INTO ${deals} ("title") VALUES ('no amount')`);
    await sync(t.mirror, workspace(module('m1', 'crm', [
      table('t1', 'deals', [
        field('fa', 'title', 'string'), field('fb', 'amount', 'string'), field('fc', 'won', 'boolean'),
        field('fd', 'due', 'date'), field('fe', 'total', 'function'), field('ff', 'tags', 'multi'),
      ]),
      table('t2', 'notes', [field('ga', 'body', 'string'), field('gb', 'deal', 'reference', { refTableId: 't1' })]),
    ])));
    const rows = await t.sql<{ record_id: number | string; status: string; last_error: string | null }>(
      `SELECT "record_id", "status", "last_error" FROM ${t.table('_wsmirror_outbox')} WHERE "operation" = 'insert' ORDER BY "entry_id"`,
    );
    expect(rows.map((r) => r.status)).toEqual(['failed', 'pending']);
    expect(rows[0]!.last_error).toMatch(/^amount changed type upstream \(number to string\) before this row was created: its value 7 was cleared with the column; set it again in SQL, then wsmirror outbox retry this entry/);
    // Never sent without it: the other row, which held no amount, goes as it is.
    const edits = await t.mirror.readPendingEdits({ now: NOW, limit: 10 });
    expect(edits.map((e) => [e.recordId, e.operation])).toEqual([[Number(rows[1]!.record_id), 'create']]);
  });
});
