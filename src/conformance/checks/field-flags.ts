import { defineCheck } from '../check.ts';
import { expectOk } from '../expectations.ts';
import { fieldParams } from './field-requests.ts';
import { field } from './fixtures.ts';
import { Tally } from './tally.ts';

/**
 * Fields: where `required` and `unique` may be set. The description says only that they mark a
 * field required or unique; these observations show what an endpoint does at the edges.
 */

export const fieldFlagChecks = [
  defineCheck({
    id: 'fields.flags.computed',
    kind: 'observation',
    section: 'Resources: Field (required, unique)',
    rule: 'Whether required and unique may be set on computed fields (function, reverse), whose values are never written: not shown. What true answers on create and on update, and false.',
    emulatorChoice: 'true is 400 on create and on update (nothing changes); false is accepted',
    scratchTables: ['flags_computed'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('flags_computed');
      const params = { params: { tableName: name } };
      const computed = [field('calc', 'function', { expression: '1' }), field('back', 'reverse', { refTableName: name })];
      const tally = new Tally();
      for (const body of computed) {
        for (const flag of ['required', 'unique']) {
          const res = await ctx.send('createField', { ...params, body: { ...body, name: `${body.name}_${flag}`, [flag]: true } });
          tally.same(`create ${body.type} with ${flag}: true`, res.status, 400);
        }
        expectOk(await ctx.send('createField', { ...params, body }), `creating the ${body.type} field ${body.name} succeeds`);
        for (const flag of ['required', 'unique']) {
          const res = await ctx.send('updateField', { ...fieldParams(name, body.name), body: { [flag]: true } });
          tally.same(`update ${body.type} to ${flag}: true`, res.status, 400);
        }
        const off = await ctx.send('updateField', { ...fieldParams(name, body.name), body: { required: false, unique: false } });
        tally.same(`update ${body.type} to required and unique false`, off.status, 200);
      }
      return tally.result('required and unique on computed fields');
    },
  }),
  defineCheck({
    id: 'fields.flags.required-over-records',
    kind: 'observation',
    section: 'Resources: Field (required)',
    rule: 'Whether a field may be required while records of its table have no value for it: not shown. What a field created with required: true answers on a table with records (none has a value for it), and a PATCH making a field required while a record has no value.',
    emulatorChoice: '400 for both (nothing changes); on a table without records the create is 201',
    scratchTables: ['flags_required', 'flags_required_empty'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('flags_required', {}, [field('title', 'string'), field('nick', 'string')]);
      const empty = await ctx.scratch.create('flags_required_empty');
      expectOk(await ctx.send('createRecords', { params: { tableName: name }, body: { records: [{ title: 'x' }] } }), 'a record is created');
      const tally = new Tally();
      const created = await ctx.send('createField', { params: { tableName: name }, body: field('fresh', 'string', { required: true }) });
      tally.same('create a required field on a table with a record', created.status, 400);
      const patched = await ctx.send('updateField', { ...fieldParams(name, 'nick'), body: { required: true } });
      tally.same('make a field required while a record has no value', patched.status, 400);
      const onEmpty = await ctx.send('createField', { params: { tableName: empty.name }, body: field('fresh', 'string', { required: true }) });
      tally.same('create a required field on a table without records', onEmpty.status, 201);
      return tally.result('required over records');
    },
  }),
];
