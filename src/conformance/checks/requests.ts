import { defineCheck } from '../check.ts';
import { expectEqual, expectOk } from '../expectations.ts';
import { fieldNames, fieldParams } from './field-requests.ts';
import { field } from './fixtures.ts';

/** What every request may carry, whatever the endpoint: the framing of bodies. */
export const requestChecks = [
  defineCheck({
    id: 'requests.no-body-json-content-type',
    section: 'Endpoints',
    rule: 'An endpoint whose request is "none" takes a request with Content-Type: application/json and an empty body (as many HTTP clients send every request) as one without a body: GET of the workspace, DELETE of a field and DELETE of a table succeed.',
    scratchTables: ['no_body'],
    async run(ctx) {
      const table = await ctx.scratch.create('no_body', {}, [field('gone', 'string'), field('kept', 'string')]);
      const empty = { rawBody: '', headers: { 'content-type': 'application/json' } };
      expectOk(await ctx.send('getWorkspace', empty), 'GET of the workspace with an empty JSON body succeeds');
      const deleted = await ctx.send('deleteField', { ...fieldParams(table.name, 'gone'), ...empty });
      expectEqual(expectOk(deleted, 'DELETE of a field with an empty JSON body succeeds').data.name, 'gone', 'the answer is the deleted field', deleted);
      expectEqual(await fieldNames(ctx, table.name), ['kept'], 'the field is gone');
      const res = await ctx.send('deleteTable', { params: { tableName: table.name }, ...empty });
      expectEqual(expectOk(res, 'DELETE of a table with an empty JSON body succeeds').data, { id: table.id }, 'the answer is { data: { id } } of the table', res);
    },
  }),
];
