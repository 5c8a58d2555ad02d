import { defineCheck, type CheckContext } from '../check.ts';
import { expectEqual, expectError, expectOk, expectTrue } from '../expectations.ts';
import { field } from './fixtures.ts';
import { Tally } from './tally.ts';

/** The records list: what filter, fields, sort and paging do, by the description or as observed. */

const ROWS = [
  { name: 'carol', age: 35, active: true, status: 'closed', tags: ['x'], born: '1990-05-01' },
  { name: 'alice', age: 30, active: false, status: 'open', tags: ['x', 'y'], born: '1995-01-01' },
  { name: 'bob', age: null, active: true, status: 'open', tags: [], born: null },
  { name: 'dave', age: 30, active: null, status: null, tags: ['y'], born: '1980-12-31' },
  { name: 'erin', age: 41.5, active: true, status: 'pending', tags: null, born: '2000-02-29' },
];
const NAMES = ROWS.map((r) => r.name);

interface People {
  table: string;
  /** Record ids in the order of ROWS. */
  ids: string[];
  /** Option ids of `status`, by name. */
  option: Record<string, string>;
}

/** A table of five people whose field values order differently by each field. */
async function people(ctx: CheckContext, purpose: string): Promise<People> {
  const { name: table } = await ctx.scratch.create(purpose, {}, [
    field('name', 'string'),
    field('age', 'number'),
    field('active', 'boolean'),
    // Option order differs from the alphabetical order of names and ids.
    field('status', 'choice', { options: [{ name: 'pending', order: 2 }, { name: 'open', order: 0 }, { name: 'closed', order: 1 }] }),
    field('tags', 'multi', { options: [{ name: 'x' }, { name: 'y' }] }),
    field('born', 'date'),
    field('calc', 'function', { expression: 'age * 2' }),
  ]);
  const got = await ctx.send('getTable', { params: { tableName: table } });
  const option: Record<string, string> = {};
  for (const f of expectOk(got).data.fields ?? []) for (const o of Array.isArray(f.options) ? f.options : []) if (o.id !== undefined) option[o.name] = o.id;
  const made = await ctx.send('createRecords', { params: { tableName: table }, body: { records: ROWS } });
  return { table, ids: expectOk(made, 'creating the five people succeeds').data.ids, option };
}

type Query = Record<string, unknown>;

async function list(ctx: CheckContext, table: string, query: Query = {}) {
  const q = Object.fromEntries(Object.entries(query).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  return ctx.send('listRecords', { params: { tableName: table }, query: q });
}

/** The names a query lists, in order, or its status when it is not 200. */
async function namesOf(ctx: CheckContext, table: string, query: Query): Promise<string[] | string> {
  const res = await list(ctx, table, query);
  return res.status === 200 ? expectOk(res).data.map((r) => String(r.values.name)) : `HTTP ${res.status}`;
}

const sorted = (names: string[] | string) => (Array.isArray(names) ? [...names].sort() : names);

export const recordListChecks = [
  defineCheck({
    id: 'records.list.unknown-table-404',
    section: 'Records',
    rule: 'GET records of a table that does not exist answers 404.',
    async run(ctx) {
      expectError(await ctx.send('listRecords', { params: { tableName: ctx.missingName } }), 404);
    },
  }),
  defineCheck({
    id: 'records.list.filter-equal-value',
    section: 'Records',
    rule: 'filter is an object of field name to value: with one condition the list holds exactly the records whose field has that value (a string, a number, a boolean, a date, a choice option by name).',
    scratchTables: ['people_filter'],
    async run(ctx) {
      const { table } = await people(ctx, 'people_filter');
      for (const [name, value, expected] of [
        ['name', 'bob', ['bob']], ['age', 30, ['alice', 'dave']], ['age', 41.5, ['erin']], ['active', true, ['bob', 'carol', 'erin']],
        ['active', false, ['alice']], ['born', '1995-01-01', ['alice']], ['status', 'open', ['alice', 'bob']],
      ] as const) {
        const res = await list(ctx, table, { filter: { [name]: value } });
        const got = expectOk(res, `filter {"${name}":${JSON.stringify(value)}} succeeds`).data.map((r) => String(r.values.name)).sort();
        expectEqual(got, expected, `filter {"${name}":${JSON.stringify(value)}} lists the records with that value`, res);
      }
    },
  }),
  defineCheck({
    id: 'records.list.values-follow-schema',
    section: 'Records; Fields',
    rule: 'The list\'s values map field names to values: after a field is renamed its value is under the new name, and a deleted field is gone from values.',
    scratchTables: ['renames'],
    async run(ctx) {
      const { name: table } = await ctx.scratch.create('renames', {}, [field('a', 'string'), field('b', 'number')]);
      const made = await ctx.send('createRecords', { params: { tableName: table }, body: { records: [{ a: 'x', b: 1 }] } });
      const [id] = expectOk(made).data.ids;
      expectOk(await ctx.send('updateField', { params: { tableName: table, fieldName: 'a' }, body: { name: 'a2' } }), 'renaming field a to a2 succeeds');
      expectOk(await ctx.send('deleteField', { params: { tableName: table, fieldName: 'b' } }), 'deleting field b succeeds');
      const res = await ctx.send('listRecords', { params: { tableName: table } });
      expectEqual(expectOk(res).data, [{ id, values: { a2: 'x' } }], 'the record lists a2 and not a or b', res);
    },
  }),
  defineCheck({
    id: 'records.list.paging-after-deletes',
    section: 'Pagination and polling wrappers',
    rule: 'Paging a larger table (250 records, some deleted) with limit 100 lists each remaining record once, and no deleted one, in the default order and sorted by a field.',
    scratchTables: ['many'],
    async run(ctx) {
      const { name: table } = await ctx.scratch.create('many', {}, [field('n', 'number')]);
      const created: string[] = [];
      for (let start = 0; start < 250; start += 100) {
        const res = await ctx.send('createRecords', { params: { tableName: table }, body: { records: Array.from({ length: 100 }, (_, i) => ({ n: start + i })).slice(0, 250 - start) } });
        created.push(...expectOk(res).data.ids);
      }
      const gone = created.filter((_, i) => i % 7 === 3);
      expectOk(await ctx.send('deleteRecords', { params: { tableName: table }, body: { records: gone } }));
      const left = created.filter((id) => !gone.includes(id)).sort();
      for (const sort of [undefined, 'n']) {
        const seen: string[] = [];
        for (let offset = 0; offset <= 300; offset += 100) {
          const res = await ctx.send('listRecords', { params: { tableName: table }, query: { sort, limit: 100, offset } });
          seen.push(...expectOk(res).data.map((r) => r.id));
          if (!expectOk(res).page_info.has_more) break;
        }
        expectEqual([...seen].sort(), left, `the pages${sort ? ` sorted by ${sort}` : ''} hold each remaining record once`);
        expectTrue(new Set(seen).size === seen.length, 'no record is listed twice', 'no repeated id', seen.length);
      }
    },
  }),
  defineCheck({
    id: 'records.list.defaults',
    kind: 'observation',
    section: 'Records',
    rule: 'The default order and page size of the list, and whether values hold unset fields: not shown.',
    emulatorChoice: 'id order; limit 100 by default, echoed in page_info (also past the end); values hold every field in field order, null when unset; fields keeps field order and may name id',
    scratchTables: ['people_defaults'],
    async run(ctx) {
      const { table, ids, option } = await people(ctx, 'people_defaults');
      const tally = new Tally();
      const all = await list(ctx, table);
      tally.same('page_info without limit', expectOk(all).page_info, { has_more: false, limit: 100, offset: 0 });
      tally.same('order without sort', expectOk(all).data.map((r) => r.id), ids);
      tally.same('the record with unset fields', expectOk(all).data[2], {
        id: ids[2], values: { name: 'bob', age: null, active: true, status: option.open, tags: [], born: null, calc: null },
      });
      tally.same('the order of the values', Object.keys(expectOk(all).data[0]?.values ?? {}), ['name', 'age', 'active', 'status', 'tags', 'born', 'calc']);
      tally.same('limit 2', expectOk(await list(ctx, table, { limit: '2' })).data.map((r) => r.id), ids.slice(0, 2));
      tally.same('limit 2 offset 4', expectOk(await list(ctx, table, { limit: '2', offset: '4' })).data.map((r) => r.id), ids.slice(4));
      tally.same('offset 50 without limit', (await list(ctx, table, { offset: '50' })).body, { data: [], page_info: { has_more: false, limit: 100, offset: 50 } });
      tally.same('fields=status,name,id', expectOk(await list(ctx, table, { fields: 'status,name,id', limit: '1' })).data[0], { id: ids[0], values: { name: 'carol', status: option.closed } });
      return tally.result('list defaults');
    },
  }),
  defineCheck({
    id: 'records.list.query-400',
    kind: 'observation',
    section: 'Limits; Records',
    rule: 'The status of a limit outside 1 to 100, an offset below 0 or not whole, an unknown name in fields, filter or sort, an unknown query parameter, and a filter that is not an object of values: not shown.',
    emulatorChoice: '400 with a message naming the query parameter (query.limit, …) and the unknown names',
    scratchTables: ['people_query'],
    async run(ctx) {
      const { table } = await people(ctx, 'people_query');
      const tally = new Tally();
      const answer = async (query: Query, says: string | RegExp) => {
        const res = await list(ctx, table, query);
        const message = (res.body as { error?: { message?: unknown } } | undefined)?.error?.message;
        const named = typeof message === 'string' && (typeof says === 'string' ? message.includes(says) : says.test(message));
        tally.same(JSON.stringify(query), `HTTP ${res.status}${named ? '' : ` (message ${JSON.stringify(message)})`}`, 'HTTP 400');
      };
      for (const q of [{ limit: '0' }, { limit: '101' }, { limit: 'x' }, { offset: '-1' }, { offset: '1.5' }]) await answer(q, /^query\./);
      await answer({ fields: 'name,nope,zzz' }, 'query.fields: unknown fields "nope", "zzz"');
      await answer({ filter: { nope: 1 } }, 'query.filter: unknown field "nope"');
      await answer({ sort: '-nope' }, 'query.sort: unknown field "nope"');
      await answer({ sort: 'Name' }, 'query.sort');
      await answer({ other: '1' }, 'other');
      for (const filter of ['not json', '[1]', '{"age":{"gt":3}}', JSON.stringify({ age: 'abc' }), JSON.stringify({ id: 'x' })]) await answer({ filter }, /^query\.filter/);
      return tally.result('list queries out of bounds');
    },
  }),
  defineCheck({
    id: 'records.list.filter-forms',
    kind: 'observation',
    section: 'Records',
    rule: 'Filter operators and composite conditions: not shown. What an array of values, null, [], several conditions, an option id, a multi value, the key id and a numeric string select.',
    emulatorChoice: 'an array is any of its values ([] matches nothing); null matches empty values (for multi also []); conditions combine with and; option ids and names both select; a multi value matches arrays holding it; id filters by record id; a numeric string matches the number; an unknown option matches nothing',
    scratchTables: ['people_forms'],
    async run(ctx) {
      const { table, ids, option } = await people(ctx, 'people_forms');
      const tally = new Tally();
      for (const [filter, expected] of [
        [{ age: [35, 41.5] }, ['carol', 'erin']], [{ age: null }, ['bob']], [{ age: [null, 35] }, ['carol', 'bob']],
        [{ status: option.open }, ['alice', 'bob']], [{ status: 'no such option' }, []],
        [{ tags: 'y' }, ['alice', 'dave']], [{ tags: ['x', 'y'] }, ['carol', 'alice', 'dave']], [{ tags: null }, ['bob', 'erin']],
        [{ id: ids[3] }, ['dave']], [{ id: [Number(ids[4]), ids[0]] }, ['carol', 'erin']],
        [{ age: 30, status: 'open' }, ['alice']], [{ age: '30' }, ['alice', 'dave']], [{ age: [] }, []],
      ] as const) {
        tally.same(JSON.stringify(filter), sorted(await namesOf(ctx, table, { filter })), [...expected].sort());
      }
      return tally.result('filter forms');
    },
  }),
  defineCheck({
    id: 'records.list.sort',
    kind: 'observation',
    section: 'Records',
    rule: 'sort names the field to sort by; the direction, where empty values go, ties, how choices sort, and sorting by id: not shown.',
    emulatorChoice: 'sort=name ascending, sort=-name descending, id/-id by record id; ties by id; empty values first ascending, last descending; choices by their options\' order; sort, filter and paging combine',
    scratchTables: ['people_sort'],
    async run(ctx) {
      const { table, ids } = await people(ctx, 'people_sort');
      const tally = new Tally();
      for (const [sort, expected] of [
        ['name', ['alice', 'bob', 'carol', 'dave', 'erin']], ['-name', ['erin', 'dave', 'carol', 'bob', 'alice']],
        ['age', ['bob', 'alice', 'dave', 'carol', 'erin']], ['-age', ['erin', 'carol', 'alice', 'dave', 'bob']],
        ['id', NAMES], ['-id', [...NAMES].reverse()], ['born', ['bob', 'dave', 'carol', 'alice', 'erin']],
        ['status', ['dave', 'alice', 'bob', 'carol', 'erin']], ['-status', ['erin', 'carol', 'alice', 'bob', 'dave']],
      ] as const) {
        tally.same(`sort=${sort}`, await namesOf(ctx, table, { sort }), expected);
      }
      const combined = await list(ctx, table, { sort: '-age', filter: { active: true }, limit: '1', offset: '1' });
      tally.same('sort=-age, active, limit 1, offset 1', combined.status === 200 ? [expectOk(combined).data.map((r) => r.values.name), expectOk(combined).page_info] : `HTTP ${combined.status}`,
        [['carol'], { has_more: true, limit: 1, offset: 1 }]);
      // Record order across pages once a record is deleted, both ways.
      expectOk(await ctx.send('deleteRecords', { params: { tableName: table }, body: { records: [ids[2]!] } }));
      const left = ids.filter((_, i) => i !== 2);
      for (const [sort, expected] of [['id', left], ['-id', [...left].reverse()]] as const) {
        const seen: string[] = [];
        for (let offset = 0; offset < 10; offset += 2) {
          const res = await list(ctx, table, { sort, limit: '2', offset: String(offset) });
          seen.push(...expectOk(res).data.map((r) => r.id));
          if (!expectOk(res).page_info.has_more) break;
        }
        tally.same(`pages of 2 sorted by ${sort} after a delete`, seen, expected);
      }
      return tally.result('sorts');
    },
  }),
];
