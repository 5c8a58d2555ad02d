import { defineCheck } from '../check.ts';
import { expectEqual, expectError, expectOk, expectStatus } from '../expectations.ts';
import { fieldNames, fieldParams } from './field-requests.ts';
import { field } from './fixtures.ts';

/** Fields: single and batch delete. */

export const fieldDeletionChecks = [
  defineCheck({
    id: 'fields.batch-delete.rules',
    section: 'Fields: rules for updating fields (8)',
    rule: 'A batch delete is one transaction: repeated names, no names, a name outside the pattern or a body that is not { fieldNames } answer 400, an unknown field 404, and nothing is deleted; otherwise 200 with the deleted fields.',
    scratchTables: ['batch_delete'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('batch_delete', {}, [field('a', 'string'), field('b', 'string'), field('c', 'string')]);
      const params = { tableName: name };
      expectError(await ctx.send('deleteFields', { params, body: { fieldNames: ['a', 'a'] } }), 400, 'repeated names answer 400');
      expectError(await ctx.send('deleteFields', { params, body: { fieldNames: ['a', 'nope'] } }), 404, 'an unknown field answers 404');
      expectError(await ctx.send('deleteFields', { params, body: { fieldNames: [] } }), 400, 'an empty fieldNames answers 400');
      expectError(await ctx.send('deleteFields', { params, body: { fieldNames: ['Bad'] } }), 400, 'a name outside the pattern answers 400');
      expectError(await ctx.send('deleteFields', { params, body: ['a'] }), 400, 'a bare array of names answers 400');
      expectEqual(await fieldNames(ctx, name), ['a', 'b', 'c'], 'the failed batches deleted nothing');
      const ok = await ctx.send('deleteFields', { params, body: { fieldNames: ['a', 'b'] } });
      expectStatus(ok, 200);
      expectEqual(expectOk(ok).data.map((f) => f.name).sort(), ['a', 'b'], 'the answer lists the deleted fields', ok);
      expectEqual(await fieldNames(ctx, name), ['c'], 'the fields are gone');
    },
  }),
  defineCheck({
    id: 'fields.delete',
    section: 'Fields',
    rule: 'DELETE of a field answers 200 { data: Field }; the field is then gone from the list.',
    scratchTables: ['delete_field'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('delete_field', {}, [field('gone', 'number'), field('kept', 'string')]);
      const res = await ctx.send('deleteField', fieldParams(name, 'gone'));
      expectStatus(res, 200);
      expectEqual(expectOk(res).data.name, 'gone', 'the answer is the deleted field', res);
      expectEqual(await fieldNames(ctx, name), ['kept'], 'the field is gone from the list');
    },
  }),
];
