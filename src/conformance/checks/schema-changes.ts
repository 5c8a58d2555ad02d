import type { SchemaChange, Table } from '../../api/index.ts';
import { defineCheck, type CheckContext } from '../check.ts';
import { expectEqual, expectError, expectOk, expectStatus, expectTrue } from '../expectations.ts';
import { field } from './fixtures.ts';
import { itemsOf, pollAll, pollStart } from './polling.ts';
import { Tally } from './tally.ts';

/**
 * Schema changes. Other users may change the workspace while the suite runs: the checks look for
 * the changes of their own scratch tables and fields among whatever else a poll returns.
 */
/** A poll opened, then a new scratch table: the table's own changes all come at or after `since`. */
async function tableSincePoll(ctx: CheckContext, purpose: string): Promise<{ since: string; table: Table & { name: string } }> {
  const since = await pollStart(ctx, 'listSchemaChanges');
  return { since, table: await ctx.scratch.create(purpose) };
}

export const schemaChangeChecks = [
  defineCheck({
    id: 'schema-changes.table-upserted',
    section: 'Resources: schema change',
    rule: 'Creating a table logs a schema change of kind Table, action upserted, with the id of the table, at or after since; the answer carries meta.asOf.',
    scratchTables: ['schema_table'],
    async run(ctx) {
      const { since, table } = await tableSincePoll(ctx, 'schema_table');
      const pages = await pollAll<SchemaChange>(ctx, 'listSchemaChanges', since);
      const changes = itemsOf(pages);
      const mine = changes.filter((c) => c.id === table.id);
      expectTrue(mine.some((c) => c.kind === 'Table' && c.action === 'upserted'), 'the new table is listed as Table upserted',
        `{ id: ${table.id}, kind: Table, action: upserted }`, mine.length === 0 ? `no change of ${table.id} among ${changes.length}` : mine, pages.at(-1)!.exchange);
      for (const c of mine) expectTrue(Date.parse(c.changedAt) >= Date.parse(since), 'its changedAt is at or after since', `>= ${since}`, c);
    },
  }),
  defineCheck({
    id: 'schema-changes.paging-as-of',
    section: 'Workspace: polling rules',
    rule: "Paging one poll of schema changes: later pages pass the first page's meta.asOf as asOf, has_more is false only on the last page; a change made between pages shows in the next poll (since = that asOf).",
    scratchTables: ['schema_paging'],
    async run(ctx) {
      const { since, table } = await tableSincePoll(ctx, 'schema_paging');
      for (const name of ['a', 'b', 'c']) {
        const res = await ctx.send('createField', { params: { tableName: table.name }, body: field(name, 'string') });
        expectStatus(res, 201, `creating field ${name} answers 201`);
      }
      const first = await ctx.send('listSchemaChanges', { query: { since, limit: 1 } });
      const page1 = expectOk(first);
      expectEqual([page1.data.length, page1.page_info], [1, { has_more: true, limit: 1, offset: 0 }], 'the first page of one holds one change and has_more', first);
      const asOf = page1.meta.asOf;
      const late = await ctx.send('createField', { params: { tableName: table.name }, body: field('late', 'string') });
      expectStatus(late, 201);
      const lateId = expectOk(late).data.id;
      const seen = [...page1.data];
      let offset = 1;
      for (; offset < 200; offset++) {
        const res = await ctx.send('listSchemaChanges', { query: { since, asOf, limit: 1, offset } });
        const page = expectOk(res);
        expectTrue(page.page_info.offset === offset && page.page_info.limit === 1, 'page_info echoes limit and offset', `limit 1, offset ${offset}`, page.page_info, res);
        seen.push(...page.data);
        if (!page.page_info.has_more) {
          expectEqual(page.data.length, 1, 'the last page (has_more false) holds the last change', res);
          break;
        }
      }
      expectTrue(!seen.some((c) => c.id === lateId), 'the pages of the poll (bounded by asOf) leave out the field created between pages', `no change of ${lateId}`, seen);
      expectTrue(seen.some((c) => c.id === table.id), 'the pages of the poll hold the table', `a change of ${table.id}`, seen);
      const next = itemsOf(await pollAll<SchemaChange>(ctx, 'listSchemaChanges', asOf));
      expectTrue(next.some((c) => c.id === lateId), 'the next poll (since = asOf) lists the field created between pages', `a change of ${lateId}`, next);
    },
  }),
  defineCheck({
    id: 'schema-changes.since-required',
    kind: 'observation',
    section: 'Errors',
    rule: 'Errors of the schema-changes endpoint other than 401: not shown. What a poll without since answers.',
    emulatorChoice: '400 with the error body',
    async run(ctx) {
      const res = await ctx.send('listSchemaChanges');
      let bodyOk = true;
      try {
        expectError(res, 400);
      } catch {
        bodyOk = false;
      }
      return { observed: `HTTP ${res.status}`, asEmulator: bodyOk };
    },
  }),
  defineCheck({
    id: 'schema-changes.query-accepted',
    section: 'Timestamp parameters; Limits',
    rule: 'since and asOf take YYYY-MM-DDTHH:MM[:SS[.fraction]]Z with a valid calendar date (a leap day, no seconds, any fraction); limit 1 to 100 and offset 0 or more are accepted: 200.',
    async run(ctx) {
      for (const query of [
        { since: '2024-02-29T00:00Z' }, { since: '2000-02-29T23:59:59Z' }, { since: '2026-01-01T00:00:00.123456789Z' },
        { since: '2026-01-01T00:00Z', asOf: '2026-01-02T00:00:00.5Z' }, { since: '2026-01-01T00:00Z', limit: 100 },
        { since: '2026-01-01T00:00Z', limit: 1, offset: 0 },
      ]) {
        const res = await ctx.send('listSchemaChanges', { query });
        expectStatus(res, 200, `?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))} answers 200`);
        expectOk(res);
      }
    },
  }),
  defineCheck({
    id: 'schema-changes.query-400',
    kind: 'observation',
    section: 'Timestamp parameters; Errors',
    rule: 'Errors of the schema-changes endpoint other than 401: not shown. What a since or asOf that is no UTC date-time (29 February 2026, no Z, a date alone, month 13, 24:00, second 60, an offset, a word), a limit outside 1 to 100, a negative offset and an unknown parameter answer.',
    emulatorChoice: '400 with a message naming the parameter (query.since, query.asOf, query.limit, query.offset, the unknown name)',
    async run(ctx) {
      const tally = new Tally();
      for (const [query, names] of [
        [{}, 'query.since'], [{ since: '2026-02-29T00:00Z' }, 'query.since'], [{ since: '2026-01-01T00:00' }, 'query.since'], [{ since: '2026-01-01' }, 'query.since'],
        [{ since: '2026-13-01T00:00Z' }, 'query.since'], [{ since: '2026-01-01T24:00Z' }, 'query.since'], [{ since: '2026-01-01T00:00:60Z' }, 'query.since'],
        [{ since: '2026-01-01T00:00+01:00' }, 'query.since'], [{ since: 'yesterday' }, 'query.since'],
        [{ since: '2026-01-01T00:00Z', asOf: '2026-02-30T00:00Z' }, 'query.asOf'], [{ since: '2026-01-01T00:00Z', limit: 'ten' }, 'query.limit'],
        [{ since: '2026-01-01T00:00Z', limit: 0 }, 'query.limit'], [{ since: '2026-01-01T00:00Z', limit: 101 }, 'query.limit'],
        [{ since: '2026-01-01T00:00Z', offset: -1 }, 'query.offset'], [{ since: '2026-01-01T00:00Z', cursor: 1 }, 'cursor'],
      ] as const) {
        const res = await ctx.send('listSchemaChanges', { query });
        const message = (res.body as { error?: { message?: unknown } } | undefined)?.error?.message;
        const named = typeof message === 'string' && message.includes(names);
        tally.same(JSON.stringify(query), `HTTP ${res.status}${named ? '' : ` (message ${JSON.stringify(message)})`}`, 'HTTP 400');
      }
      return tally.result('schema-changes queries');
    },
  }),
  defineCheck({
    id: 'schema-changes.future-as-of',
    kind: 'observation',
    section: 'Endpoints: polling rules',
    rule: 'A later page passes back the first page\'s meta.asOf as asOf. What an asOf later than the endpoint\'s present (9999-01-01, which no poll handed out) answers: not shown.',
    emulatorChoice: '400 naming query.asOf',
    async run(ctx) {
      const res = await ctx.send('listSchemaChanges', { query: { since: '2026-01-01T00:00Z', asOf: '9999-01-01T00:00:00Z' } });
      const message = (res.body as { error?: { message?: unknown } } | undefined)?.error?.message;
      const named = typeof message === 'string' && message.includes('query.asOf');
      return { observed: `HTTP ${res.status}${res.status === 400 && !named ? ` (message ${JSON.stringify(message)})` : ''}`, asEmulator: res.status === 400 && named };
    },
  }),
  defineCheck({
    id: 'schema-changes.kinds-and-actions',
    kind: 'observation',
    section: 'Resources: schema change',
    rule: 'kind values other than Table and action values other than upserted: not shown. What a field create, a field delete and a table delete log.',
    emulatorChoice: 'Field upserted; Field deleted; Table deleted',
    scratchTables: ['schema_kinds'],
    async run(ctx) {
      const table = await ctx.scratch.create('schema_kinds');
      const since = await pollStart(ctx, 'listSchemaChanges');
      const created = await ctx.send('createField', { params: { tableName: table.name }, body: field('f', 'string') });
      const fieldId = expectOk(created).data.id;
      expectOk(await ctx.send('deleteField', { params: { tableName: table.name, fieldName: 'f' } }));
      expectOk(await ctx.send('deleteTable', { params: { tableName: table.name } }));
      const changes = itemsOf(await pollAll<SchemaChange>(ctx, 'listSchemaChanges', since));
      const show = (id: string) => changes.filter((c) => c.id === id).map((c) => `${c.kind} ${c.action}`);
      const [fieldCreate = 'nothing', fieldDelete = 'nothing'] = show(fieldId);
      const tableDelete = show(table.id).at(-1) ?? 'nothing';
      const observed = `field create: ${fieldCreate}; field delete: ${fieldDelete}; table delete: ${tableDelete}`;
      return { observed, asEmulator: observed === 'field create: Field upserted; field delete: Field deleted; table delete: Table deleted' };
    },
  }),
];
