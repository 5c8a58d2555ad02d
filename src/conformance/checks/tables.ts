import { defineCheck } from '../check.ts';
import { expectEqual, expectError, expectOk, expectTrue } from '../expectations.ts';
import { field } from './fixtures.ts';

/** Tables: create, list, read, update (rename, flags) and delete inside the module. */
export const tableChecks = [
  defineCheck({
    id: 'tables.create',
    section: 'Tables',
    rule: 'POST tables creates a table from name, labels, icon and flags and answers { data: Table } keeping each; GET answers the same table, including its fields.',
    scratchTables: ['create'],
    async run(ctx) {
      const name = ctx.scratch.name('create');
      const body = {
        name, labels: { '': 'Conformance', de: 'Konformität' }, icon: { icon: 'person', color: '#123456', filling: 1 },
        hasFiles: true, hasGlobalSearch: true, hasHistory: true, isEmailLinkingEnabled: true, isHidden: true,
      };
      const res = await ctx.send('createTable', { body });
      const created = expectOk(res, 'POST tables succeeds').data;
      ctx.scratch.adopt(name);
      for (const [key, value] of Object.entries(body)) {
        expectEqual((created as Record<string, unknown>)[key], value, `the answer keeps ${key}`, res);
      }
      const got = await ctx.send('getTable', { params: { tableName: name } });
      const table = expectOk(got, 'GET of the new table succeeds').data;
      for (const [key, value] of Object.entries(body)) {
        expectEqual((table as Record<string, unknown>)[key], value, `GET answers ${key} as created`, got);
      }
      expectEqual(table.id, created.id, 'GET answers the id of the create', got);
      expectTrue(Array.isArray(table.fields), 'GET of a table includes its fields', 'a fields array', table.fields, got);
    },
  }),
  defineCheck({
    id: 'tables.create.exists-400',
    section: 'Tables',
    rule: 'POST tables with the name of an existing table of the module answers 400.',
    scratchTables: ['twice'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('twice');
      expectError(await ctx.send('createTable', { body: { name } }), 400);
    },
  }),
  defineCheck({
    id: 'tables.unknown-module-404',
    section: 'Tables',
    rule: 'GET and POST tables of a module that does not exist answer 404.',
    async run(ctx) {
      const params = { moduleName: ctx.missingName };
      expectError(await ctx.send('listTables', { params }), 404);
      expectError(await ctx.send('createTable', { params, body: { name: ctx.missingName } }), 404);
    },
  }),
  defineCheck({
    id: 'tables.list',
    section: 'Tables',
    rule: 'GET tables answers { data: [Table] } with every table of the module.',
    scratchTables: ['listed'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('listed', {}, [field('title', 'string')]);
      const res = await ctx.send('listTables');
      const tables = expectOk(res, 'GET tables succeeds').data;
      expectTrue(tables.some((t) => t.name === name), 'the list holds the new table', `a table named ${name}`, tables.map((t) => t.name), res);
    },
  }),
  defineCheck({
    id: 'tables.get.unknown-404',
    section: 'Tables',
    rule: 'GET, PATCH and DELETE of a table that does not exist, or of a module that does not exist, answer 404.',
    async run(ctx) {
      const cases: [string, Record<string, string>][] = [
        ['an unknown table', { tableName: ctx.missingName }],
        ['a table of an unknown module', { moduleName: ctx.missingName, tableName: ctx.missingName }],
      ];
      for (const [where, params] of cases) {
        expectError(await ctx.send('getTable', { params }), 404, `GET of ${where} answers 404`);
        expectError(await ctx.send('updateTable', { params, body: { isHidden: true } }), 404, `PATCH of ${where} answers 404`);
        expectError(await ctx.send('deleteTable', { params }), 404, `DELETE of ${where} answers 404`);
      }
    },
  }),
  defineCheck({
    id: 'tables.patch.rename',
    section: 'Tables',
    rule: 'PATCH with name renames the table: the new name answers, the old one is 404, the id stays; renaming onto an existing table answers 400.',
    scratchTables: ['before', 'after', 'other'],
    async run(ctx) {
      const table = await ctx.scratch.create('before');
      const other = await ctx.scratch.create('other');
      const to = ctx.scratch.name('after');
      const res = await ctx.send('updateTable', { params: { tableName: table.name }, body: { name: to } });
      const renamed = expectOk(res, 'PATCH with a new name succeeds').data;
      ctx.scratch.renamed(table.name, to);
      expectEqual([renamed.name, renamed.id], [to, table.id], 'the answer has the new name and the same id', res);
      expectError(await ctx.send('getTable', { params: { tableName: table.name } }), 404, 'the old name answers 404');
      const got = await ctx.send('getTable', { params: { tableName: to } });
      expectEqual(expectOk(got).data.id, table.id, 'the new name answers the same table', got);
      expectError(await ctx.send('updateTable', { params: { tableName: to }, body: { name: other.name } }), 400, 'renaming onto an existing table answers 400');
    },
  }),
  defineCheck({
    id: 'tables.patch.flags',
    section: 'Tables',
    rule: 'PATCH sets hasHistory and the other flags (hasFiles, hasGlobalSearch, isHidden); hasHistory can be switched off and on again.',
    scratchTables: ['flags'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('flags');
      for (const hasHistory of [true, false, true]) {
        const res = await ctx.send('updateTable', { params: { tableName: name }, body: { hasHistory } });
        expectEqual(expectOk(res).data.hasHistory, hasHistory, `PATCH hasHistory ${hasHistory} is kept`, res);
      }
      const res = await ctx.send('updateTable', { params: { tableName: name }, body: { isHidden: true, hasFiles: true, hasGlobalSearch: true } });
      const table = expectOk(res).data;
      expectEqual([table.isHidden, table.hasFiles, table.hasGlobalSearch, table.hasHistory], [true, true, true, true], 'PATCH sets the flags sent and keeps the others', res);
    },
  }),
  defineCheck({
    id: 'tables.delete',
    section: 'Tables',
    rule: 'DELETE answers { data: { id } } with the table id; the table and its fields are then 404, and so is a second DELETE; a new table of that name starts empty.',
    scratchTables: ['deleted'],
    async run(ctx) {
      const table = await ctx.scratch.create('deleted', {}, [field('title', 'string')]);
      const params = { tableName: table.name };
      const res = await ctx.send('deleteTable', { params });
      expectEqual(expectOk(res, 'DELETE of the table succeeds').data, { id: table.id }, 'the answer is { data: { id } } of the table', res);
      expectError(await ctx.send('getTable', { params }), 404, 'the deleted table answers 404');
      expectError(await ctx.send('listFields', { params }), 404, 'the fields of the deleted table answer 404');
      expectError(await ctx.send('deleteTable', { params }), 404, 'a second DELETE answers 404');
      const again = await ctx.scratch.create('deleted');
      expectTrue(again.id !== table.id && (again.fields ?? []).length === 0, 'a new table of the same name is a new, empty table',
        `an id other than ${table.id} and no fields`, again);
    },
  }),
];
