import type { SchemaChange } from '../../api/index.ts';
import { defineCheck } from '../check.ts';
import { expectEqual, expectError, expectOk, expectStatus, expectTrue } from '../expectations.ts';
import { field } from './fixtures.ts';
import { itemsOf, pollAll, pollStart } from './polling.ts';

/**
 * Schema changes. Other users may change the workspace while the suite runs: the checks look for
 * the changes of their own scratch tables and fields among whatever else a poll returns.
 */
export const schemaChangeChecks = [
  defineCheck({
    id: 'schema-changes.table-upserted',
    section: 'Resources: schema change',
    rule: 'Creating a table logs a schema change of kind Table, action upserted, with the id of the table, at or after since; the answer carries meta.asOf.',
    scratchTables: ['schema_table'],
    async run(ctx) {
      const since = await pollStart(ctx, 'listSchemaChanges');
      const table = await ctx.scratch.create('schema_table');
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
      const since = await pollStart(ctx, 'listSchemaChanges');
      const table = await ctx.scratch.create('schema_paging');
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
