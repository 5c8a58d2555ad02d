import { RECORDS_PAYLOAD_LIMIT_BYTES, type Table } from '../../api/index.ts';
import { defineCheck, type CheckContext } from '../check.ts';
import { expectEqual, expectError, expectOk, expectTrue } from '../expectations.ts';
import { field } from './fixtures.ts';
import { pollStart } from './polling.ts';

/** Records: create, list (paging, fields, filter), update, delete, transactions, value rules, payload limit. */

const FIELDS = [field('name', 'string'), field('size', 'number'), field('active', 'boolean'), field('tags', 'multi', { options: [{ name: 'red' }, { name: 'blue' }] })];

async function recordsTable(ctx: CheckContext, purpose: string, props: Record<string, unknown> = {}): Promise<string> {
  return (await ctx.scratch.create(purpose, props, FIELDS)).name;
}

async function create(ctx: CheckContext, tableName: string, records: Record<string, unknown>[]): Promise<string[]> {
  const res = await ctx.send('createRecords', { params: { tableName }, body: { records } });
  const ids = expectOk(res, 'POST records succeeds').data.ids;
  expectEqual(ids.length, records.length, 'POST records answers one id per record, in order', res);
  return ids;
}

/** A scratch table with a title field and one record of that title: the table a reference field points to. */
async function referenceTarget(ctx: CheckContext, purpose: string, title: string): Promise<{ table: Table & { name: string }; id: string }> {
  const table = await ctx.scratch.create(purpose, {}, [field('title', 'string')]);
  const [id] = await create(ctx, table.name, [{ title }]);
  return { table, id: id! };
}

/** Every record of a scratch table (a few), as id → values. */
async function readAll(ctx: CheckContext, tableName: string): Promise<Map<string, Record<string, unknown>>> {
  const res = await ctx.send('listRecords', { params: { tableName }, query: { limit: 100 } });
  return new Map(expectOk(res, 'GET records succeeds').data.map((r) => [r.id, r.values]));
}

/**
 * Updates over 6 MB, `tries` times: each answers 413, and the record is unchanged. With more than
 * one try each is sent once: a reset connection is the failure looked for, not one to repeat.
 */
async function oversizedUpdates(ctx: CheckContext, purpose: string, tries: number, headers?: Record<string, string>): Promise<void> {
  const table = await recordsTable(ctx, purpose);
  const [a] = await create(ctx, table, [{ name: 'a' }]);
  const rawBody = JSON.stringify({ records: [{ id: a, name: 'x'.repeat(RECORDS_PAYLOAD_LIMIT_BYTES + 64 * 1024) }] });
  for (let i = 1; i <= tries; i++) {
    const res = await ctx.send('updateRecords', { params: { tableName: table }, rawBody, ...(headers ? { headers } : {}), ...(tries > 1 ? { once: true as const } : {}) });
    expectError(res, 413, tries === 1 ? 'answers 413' : `answers 413 (try ${i})`);
  }
  expectEqual((await readAll(ctx, table)).get(a!)?.name, 'a', 'the record is unchanged');
}

export const recordChecks = [
  defineCheck({
    id: 'records.create',
    section: 'Records',
    rule: 'POST records with { records: [flat objects] } answers { data: { ids } } (strings), and the list answers each record as { id, values }.',
    scratchTables: ['records'],
    async run(ctx) {
      const table = await recordsTable(ctx, 'records');
      const [a, b] = await create(ctx, table, [{ name: 'a', size: 1, active: true }, { name: 'b', size: 2.5, active: false }]);
      const all = await readAll(ctx, table);
      expectEqual([...all.keys()].sort(), [a, b].sort(), 'the list holds the created records');
      expectEqual([all.get(a!)?.name, all.get(a!)?.size, all.get(a!)?.active], ['a', 1, true], 'the values of the first record');
      expectEqual([all.get(b!)?.name, all.get(b!)?.size, all.get(b!)?.active], ['b', 2.5, false], 'the values of the second record');
    },
  }),
  defineCheck({
    id: 'records.create.transactional',
    section: 'What the service does; Records',
    rule: 'A create is transactional: one record with an unknown field, a value of the wrong type, an unknown choice option, a missing required field or a reference to no record answers 400 and creates none (and logs no change); an empty records array, a body without records or with another property answer 400; an unknown table or module 404.',
    scratchTables: ['create_tx', 'create_tx_target'],
    async run(ctx) {
      const { table: target, id: targetId } = await referenceTarget(ctx, 'create_tx_target', 't');
      const { name: table } = await ctx.scratch.create('create_tx', { hasHistory: true }, [
        field('name', 'string', { required: true }), field('size', 'number'),
        field('status', 'choice', { options: [{ name: 'open' }] }), field('org', 'reference', { refTableName: target.name }),
      ]);
      const asOf = await pollStart(ctx, 'listRecordChanges', table);
      const good = { name: 'fine', status: 'open', org: Number(targetId) };
      const bad: [string, Record<string, unknown>][] = [
        ['an unknown field', { name: 'x', nope: 1 }],
        ['a value of the wrong type', { name: 'x', size: 'not a number' }],
        ['an unknown choice option', { name: 'x', status: 'gone' }],
        ['a missing required field', { size: 1 }],
        ['a reference to no record', { name: 'x', org: Number(targetId) + 1_000_000 }],
      ];
      const params = { tableName: table };
      for (const [what, record] of bad) {
        expectError(await ctx.send('createRecords', { params, body: { records: [good, record] } }), 400, `${what} answers 400`);
      }
      expectError(await ctx.send('createRecords', { params, body: { records: [] } }), 400, 'an empty records array answers 400');
      expectError(await ctx.send('createRecords', { params, body: {} }), 400, 'a body without records answers 400');
      expectError(await ctx.send('createRecords', { params, body: { records: [good], extra: 1 } }), 400, 'a body with another property answers 400');
      expectError(await ctx.send('createRecords', { params: { tableName: ctx.missingName }, body: { records: [good] } }), 404, 'an unknown table answers 404');
      expectError(await ctx.send('createRecords', { params: { moduleName: ctx.missingName, tableName: table }, body: { records: [good] } }), 404, 'an unknown module answers 404');
      expectEqual((await readAll(ctx, table)).size, 0, 'no record was created');
      const changes = await ctx.send('listRecordChanges', { params, query: { since: asOf } });
      expectEqual(expectOk(changes).data, [], 'no record change was logged', changes);
      await create(ctx, table, [good]);
    },
  }),
  defineCheck({
    id: 'records.list.paging',
    section: 'Pagination and polling wrappers',
    rule: 'GET records pages with limit and offset; page_info has has_more, limit and offset, has_more false on the last page; the pages hold each record once.',
    scratchTables: ['paging'],
    async run(ctx) {
      const table = await recordsTable(ctx, 'paging');
      const ids = await create(ctx, table, [1, 2, 3, 4, 5].map((n) => ({ name: `r${n}`, size: n })));
      const seen: string[] = [];
      for (const [offset, hasMore, count] of [[0, true, 2], [2, true, 2], [4, false, 1]] as const) {
        const res = await ctx.send('listRecords', { params: { tableName: table }, query: { limit: 2, offset } });
        const page = expectOk(res);
        expectEqual(page.page_info, { has_more: hasMore, limit: 2, offset }, `page_info at offset ${offset}`, res);
        expectEqual(page.data.length, count, `records at offset ${offset}`, res);
        seen.push(...page.data.map((r) => r.id));
      }
      expectEqual([...seen].sort(), [...ids].sort(), 'the pages hold every record once');
      const exact = await ctx.send('listRecords', { params: { tableName: table }, query: { limit: 5 } });
      expectEqual(expectOk(exact).page_info.has_more, false, 'a page that holds exactly the last record has has_more false', exact);
      const beyond = await ctx.send('listRecords', { params: { tableName: table }, query: { limit: 2, offset: 50 } });
      const past = expectOk(beyond);
      expectEqual([past.data.length, past.page_info.has_more], [0, false], 'a page past the end is empty, has_more false', beyond);
    },
  }),
  defineCheck({
    id: 'records.list.fields-and-filter',
    section: 'Records',
    rule: 'GET records with fields includes only the named fields; with filter (an object of field name to value) only the matching records.',
    scratchTables: ['filter'],
    async run(ctx) {
      const table = await recordsTable(ctx, 'filter');
      const [, b] = await create(ctx, table, [{ name: 'a', size: 1 }, { name: 'b', size: 2 }, { name: 'c', size: 3 }]);
      const params = { tableName: table };
      const narrowed = await ctx.send('listRecords', { params, query: { fields: 'name', limit: 100 } });
      const values = expectOk(narrowed).data.map((r) => Object.keys(r.values).sort());
      expectTrue(values.length === 3 && values.every((keys) => keys.includes('name') && !keys.includes('size')),
        'fields=name gives name and not size', 'values with name and without size', values, narrowed);
      const filtered = await ctx.send('listRecords', { params, query: { filter: JSON.stringify({ name: 'b' }) } });
      expectEqual(expectOk(filtered).data.map((r) => r.id), [b], 'filter {"name":"b"} gives the one record named b', filtered);
    },
  }),
  defineCheck({
    id: 'records.update',
    section: 'Records',
    rule: 'PATCH records with { records: [objects with id] } answers { data: { updatedIds } } and changes only the values sent; null clears a value.',
    scratchTables: ['update'],
    async run(ctx) {
      const table = await recordsTable(ctx, 'update');
      const [a, b, c] = await create(ctx, table, [{ name: 'a', size: 1 }, { name: 'b', size: 2 }, { name: 'c', size: 3 }]);
      const records = [{ id: Number(a), size: 10 }, { id: b, name: null }, { id: c, name: 'C' }];
      const res = await ctx.send('updateRecords', { params: { tableName: table }, body: { records } });
      expectEqual(expectOk(res, 'PATCH records succeeds').data.updatedIds, [a, b, c], 'the answer lists the updated ids as strings, in order (ids sent as numbers or strings)', res);
      const all = await readAll(ctx, table);
      expectEqual([all.get(a!)?.name, all.get(a!)?.size], ['a', 10], 'the first record has its new size and kept its name');
      expectTrue(all.get(b!)?.name === null || all.get(b!)?.name === undefined, 'null cleared the name of the second record', 'null or absent', all.get(b!)?.name);
      expectEqual(all.get(b!)?.size, 2, 'the second record kept its size');
      expectEqual([all.get(c!)?.name, all.get(c!)?.size], ['C', 3], 'the third record has its new name and kept its size');
    },
  }),
  defineCheck({
    id: 'records.update.transactional',
    section: 'Records: rules (1)',
    rule: 'Update is transactional: a record that does not exist answers 404; an invalid value, an unknown field or a reference to no record answers 400; nothing is changed.',
    scratchTables: ['update_tx', 'update_tx_target'],
    async run(ctx) {
      const target = await ctx.scratch.create('update_tx_target', {}, [field('title', 'string')]);
      const table = (await ctx.scratch.create('update_tx', {}, [...FIELDS, field('org', 'reference', { refTableName: target.name })])).name;
      const [a, b] = await create(ctx, table, [{ name: 'a', size: 1 }, { name: 'b', size: 2 }]);
      const params = { tableName: table };
      const created = await create(ctx, table, [{ name: 'gone' }]);
      expectOk(await ctx.send('deleteRecords', { params, body: { records: created } }));
      const before = await readAll(ctx, table);
      expectError(await ctx.send('updateRecords', { params, body: { records: [{ id: a, size: 2 }, { id: created[0], size: 3 }] } }), 404, 'a missing record answers 404');
      for (const [what, bad] of [
        ['an invalid value', { id: b, active: 'yes' }], ['a non-numeric string for a number', { id: b, size: 'x' }],
        ['an unknown field', { id: b, nope: 1 }], ['a reference to no record', { id: b, org: 999_999_999 }],
      ] as const) {
        expectError(await ctx.send('updateRecords', { params, body: { records: [{ id: a, name: 'changed', size: 3 }, bad] } }), 400, `${what} answers 400`);
      }
      expectEqual(await readAll(ctx, table), before, 'the failed updates changed nothing');
    },
  }),
  defineCheck({
    id: 'records.other-table-404',
    section: 'Records; Errors',
    rule: 'A record id is a record of the table in the path: an update or delete naming a record of another table answers 404 (record not found) and changes nothing; a reference must name a record of the referenced table (400 otherwise).',
    scratchTables: ['own', 'own_other'],
    async run(ctx) {
      const { table: other, id: otherId } = await referenceTarget(ctx, 'own_other', 'elsewhere');
      const { name: table } = await ctx.scratch.create('own', {}, [field('name', 'string'), field('org', 'reference', { refTableName: other.name })]);
      const [a] = await create(ctx, table, [{ name: 'a', org: Number(otherId) }]);
      const params = { tableName: table };
      const before = await readAll(ctx, table);
      expectError(await ctx.send('updateRecords', { params, body: { records: [{ id: otherId, name: 'z' }] } }), 404, 'updating a record of another table answers 404');
      expectError(await ctx.send('deleteRecords', { params, body: { records: [otherId] } }), 404, 'deleting a record of another table answers 404');
      expectError(await ctx.send('createRecords', { params, body: { records: [{ name: 'r', org: Number(a) }] } }), 400, 'a reference to a record of a table other than the referenced one answers 400');
      expectEqual(await readAll(ctx, table), before, 'nothing changed in the table');
      expectEqual([...(await readAll(ctx, other.name)).keys()], [otherId], 'the record of the other table is still there');
    },
  }),
  defineCheck({
    id: 'records.update.value-rules',
    section: 'Resources: value shapes by field type',
    rule: 'On update a boolean takes true/false only (1 is 400), a multi takes an array (a plain string is 400), a number also takes a numeric string.',
    scratchTables: ['values'],
    async run(ctx) {
      const table = await recordsTable(ctx, 'values');
      const [a] = await create(ctx, table, [{ name: 'a', size: 1, active: true, tags: ['red'] }]);
      const params = { tableName: table };
      expectError(await ctx.send('updateRecords', { params, body: { records: [{ id: a, active: 1 }] } }), 400, 'boolean 1 answers 400');
      expectError(await ctx.send('updateRecords', { params, body: { records: [{ id: a, tags: 'blue' }] } }), 400, 'a plain string for a multi answers 400');
      expectOk(await ctx.send('updateRecords', { params, body: { records: [{ id: a, size: '12.5', active: false }] } }), 'a numeric string for a number is accepted');
      const values = (await readAll(ctx, table)).get(a!);
      expectEqual([values?.size, values?.active], [12.5, false], 'the number and the boolean are stored');
    },
  }),
  defineCheck({
    id: 'records.update.time-shapes',
    section: 'Resources: value shapes by field type',
    rule: 'date takes YYYY-MM-DD on create, and on update also an ISO 8601 string or Unix milliseconds; timestamp takes an ISO 8601 UTC string, on update also Unix milliseconds; time takes HH:MM.',
    scratchTables: ['times'],
    async run(ctx) {
      const fields = [field('day', 'date'), field('at', 'timestamp'), field('clock', 'time')];
      const { name: tableName } = await ctx.scratch.create('times', {}, fields);
      const [id] = expectOk(await ctx.send('createRecords', { params: { tableName }, body: { records: [{ day: '2024-02-29', at: '2024-05-06T07:08:09Z', clock: '09:30' }] } }), 'a record with a date, a timestamp and a time is created').data.ids;
      const read = async () => (await readAll(ctx, tableName)).get(id!);
      const first = await read();
      expectEqual([first?.day, first?.clock], ['2024-02-29', '09:30'], 'the date and the time read back as sent');
      expectEqual(Date.parse(String(first?.at)), Date.parse('2024-05-06T07:08:09Z'), 'the timestamp reads back as the same instant');
      const ms = Date.parse('2025-01-02T03:04:05.678Z');
      expectOk(await ctx.send('updateRecords', { params: { tableName }, body: { records: [{ id, day: ms, at: ms }] } }), 'a date and a timestamp given as Unix milliseconds are accepted on update');
      const second = await read();
      expectEqual(second?.day, '2025-01-02', 'a date set from milliseconds reads back as that UTC date');
      expectEqual(Date.parse(String(second?.at)), ms, 'a timestamp set from milliseconds reads back as that instant');
      expectOk(await ctx.send('updateRecords', { params: { tableName }, body: { records: [{ id, day: '2025-03-04T05:06:07Z' }] } }), 'a date given as an ISO 8601 timestamp is accepted on update');
      expectEqual((await read())?.day, '2025-03-04', 'a date set from an ISO timestamp reads back as that date');
    },
  }),
  defineCheck({
    id: 'records.delete',
    section: 'Records: rules (2)',
    rule: 'DELETE records answers { data: { deletedIds } }; it is transactional: an id that does not exist answers 404 and deletes nothing; an empty records array answers 400 (batch arrays hold at least 1 item).',
    scratchTables: ['delete'],
    async run(ctx) {
      const table = await recordsTable(ctx, 'delete');
      const [a, b, c, gone] = await create(ctx, table, [{ name: 'a' }, { name: 'b' }, { name: 'c' }, { name: 'gone' }]);
      const params = { tableName: table };
      expectOk(await ctx.send('deleteRecords', { params, body: { records: [gone!] } }));
      expectError(await ctx.send('deleteRecords', { params, body: { records: [a!, gone!] } }), 404, 'an id that does not exist answers 404');
      expectError(await ctx.send('deleteRecords', { params, body: { records: [] } }), 400, 'an empty records array answers 400');
      expectEqual([...(await readAll(ctx, table)).keys()].sort(), [a, b, c].sort(), 'the failed deletes deleted nothing');
      const res = await ctx.send('deleteRecords', { params, body: { records: [Number(a), b!] } });
      expectEqual(expectOk(res).data.deletedIds, [a, b], 'the answer lists the deleted ids as strings (sent as a number and a string)', res);
      expectEqual([...(await readAll(ctx, table)).keys()], [c], 'the deleted records are gone, the other is kept');
    },
  }),
  defineCheck({
    id: 'records.invalid-id-400',
    section: 'Errors; Records: rules (1, 2)',
    rule: 'An invalid record id answers 400 (in an update and in a delete), and so does an update record without id; nothing changes.',
    scratchTables: ['bad_id'],
    async run(ctx) {
      const table = await recordsTable(ctx, 'bad_id');
      const [a] = await create(ctx, table, [{ name: 'a' }]);
      const params = { tableName: table };
      for (const id of ['not-an-id', 'abc', 1.5, 2.5, null, {}]) {
        expectError(await ctx.send('deleteRecords', { params, body: { records: [a, id] } }), 400, `deleting id ${JSON.stringify(id)} answers 400`);
        expectError(await ctx.send('updateRecords', { params, body: { records: [{ id: a, name: 'z' }, { id, name: 'z' }] } }), 400, `updating id ${JSON.stringify(id)} answers 400`);
      }
      expectError(await ctx.send('updateRecords', { params, body: { records: [{ name: 'z' }] } }), 400, 'an update record without id answers 400');
      const all = await readAll(ctx, table);
      expectEqual([[...all.keys()], all.get(a!)?.name], [[a], 'a'], 'nothing was deleted or changed');
    },
  }),
  defineCheck({
    id: 'records.update.payload-413',
    section: 'Limits',
    rule: 'A records update payload over 6 MB answers 413.',
    scratchTables: ['payload'],
    run: (ctx) => oversizedUpdates(ctx, 'payload', 1),
  }),
  defineCheck({
    id: 'records.update.payload-413-connection-close',
    section: 'Limits',
    rule: 'A records update payload over 6 MB answers 413 also on a connection the client asks to close after it (Connection: close): the client gets the 413, not a connection reset while it is still sending (three times).',
    scratchTables: ['payload_close'],
    run: (ctx) => oversizedUpdates(ctx, 'payload_close', 3, { connection: 'close' }),
  }),
];
