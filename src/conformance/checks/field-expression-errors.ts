import type { SchemaChange } from '../../api/index.ts';
import { defineCheck, type CheckContext } from '../check.ts';
import { expectOk, expectTrue } from '../expectations.ts';
import { fieldParams } from './field-requests.ts';
import { field } from './fixtures.ts';
import { itemsOf, pollAll, pollStart } from './polling.ts';

/**
 * Fields: `expressionErrors` is "present when an expression is invalid", so it follows the
 * schema an expression names, whichever request changes that schema; and a field whose
 * `expressionErrors` change has changed, so a schema poll lists it.
 */

/** The function field's `expressionErrors` has problems (true) or none (absent or empty). */
async function expectErrors(ctx: CheckContext, tableName: string, fieldName: string, present: boolean, after: string): Promise<void> {
  const res = await ctx.send('getField', fieldParams(tableName, fieldName));
  const errors = expectOk(res).data.expressionErrors;
  const has = Array.isArray(errors) && errors.length > 0;
  expectTrue(has === present, `after ${after}, GET of ${fieldName} ${present ? 'carries' : 'has no'} expressionErrors`,
    present ? 'a non-empty expressionErrors array' : 'no expressionErrors (absent or [])', errors ?? '(absent)', res);
}

export const fieldExpressionErrorChecks = [
  defineCheck({
    id: 'fields.expression-errors.current',
    section: 'Resources: Field (expressionErrors)',
    rule: 'expressionErrors is present when an expression is invalid, whichever request made it so: a function field naming a field that does not exist carries it; creating that field removes it; renaming the field away, or deleting it, brings it back.',
    scratchTables: ['expr_follow'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('expr_follow', {}, [field('calc', 'function', { expression: 'later * 2' })]);
      const params = { params: { tableName: name } };
      await expectErrors(ctx, name, 'calc', true, 'creating calc while later does not exist');
      expectOk(await ctx.send('createField', { ...params, body: field('later', 'number') }));
      await expectErrors(ctx, name, 'calc', false, 'creating the number field later');
      expectOk(await ctx.send('updateField', { ...fieldParams(name, 'later'), body: { name: 'sooner' } }));
      await expectErrors(ctx, name, 'calc', true, 'renaming later to sooner');
      expectOk(await ctx.send('updateFields', { ...params, body: [{ fieldName: 'sooner', name: 'later' }] }));
      await expectErrors(ctx, name, 'calc', false, 'renaming it back to later');
      expectOk(await ctx.send('deleteField', fieldParams(name, 'later')));
      await expectErrors(ctx, name, 'calc', true, 'deleting later');
    },
  }),
  defineCheck({
    id: 'schema-changes.expression-errors-upserted',
    section: 'Resources: schema change; Field (expressionErrors)',
    rule: 'A field is upserted when it is updated: a function field whose expressionErrors go away because the field its expression names is created is listed as upserted by the next poll.',
    scratchTables: ['expr_logged'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('expr_logged', {}, [field('calc', 'function', { expression: 'later * 2' })]);
      const calc = expectOk(await ctx.send('getField', fieldParams(name, 'calc'))).data.id;
      // A poll from here may repeat calc's own create (stamped at its asOf): count its changes before and after.
      const since = await pollStart(ctx, 'listSchemaChanges');
      const count = async () => itemsOf(await pollAll<SchemaChange>(ctx, 'listSchemaChanges', since))
        .filter((c) => c.id === calc && c.kind === 'Field' && c.action === 'upserted').length;
      const before = await count();
      expectOk(await ctx.send('createField', { params: { tableName: name }, body: field('later', 'number') }));
      const after = await count();
      expectTrue(after > before, `creating later lists calc (${calc}) as Field upserted`, `more than ${before} change(s) of ${calc}`, `${after}`);
    },
  }),
];
