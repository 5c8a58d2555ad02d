import { defineCheck } from '../check.ts';
import { expectEqual, expectError, expectOk, expectStatus, expectTrue } from '../expectations.ts';
import { fieldNames, fieldParams } from './field-requests.ts';
import { field } from './fixtures.ts';

/** Fields: single and batch update (rename, properties, guards, expressions, options), with the rules of the description for updating fields. */

export const fieldUpdateChecks = [
  defineCheck({
    id: 'fields.update.rename',
    section: 'Fields; Fields: rules for updating fields (7)',
    rule: 'PATCH of a field with name renames it (200 { data: Field }, the same id); the list then has the new name only, and GET of the old name no longer answers the field; renaming onto an existing field answers 400.',
    scratchTables: ['rename_field'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('rename_field', {}, [field('old_name', 'string'), field('other', 'string')]);
      const before = expectOk(await ctx.send('getField', fieldParams(name, 'old_name'))).data;
      const res = await ctx.send('updateField', { ...fieldParams(name, 'old_name'), body: { name: 'new_name', labels: { '': 'New' } } });
      expectStatus(res, 200);
      expectEqual([expectOk(res).data.name, expectOk(res).data.id], ['new_name', before.id], 'the answer has the new name and the same id', res);
      expectEqual(await fieldNames(ctx, name), ['new_name', 'other'], 'the list has the new name');
      const old = await ctx.send('getField', fieldParams(name, 'old_name'));
      expectTrue(old.status >= 400, 'GET of the old name answers no field', 'an error status', `HTTP ${old.status}`, old);
      expectError(await ctx.send('updateField', { ...fieldParams(name, 'new_name'), body: { name: 'other' } }), 400, 'renaming onto an existing field answers 400');
      expectEqual(await fieldNames(ctx, name), ['new_name', 'other'], 'the refused rename changed nothing');
    },
  }),
  defineCheck({
    id: 'fields.update.properties',
    section: 'Fields',
    rule: 'PATCH of a field sets labels, required, index, search and unique: 200 with the field holding them, and GET answers the same field.',
    scratchTables: ['field_props'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('field_props', {}, [field('title', 'string')]);
      const body = { labels: { '': 'Title', fr: 'Titre' }, required: true, index: true, search: true, unique: true };
      const res = await ctx.send('updateField', { ...fieldParams(name, 'title'), body });
      expectStatus(res, 200);
      const updated = expectOk(res).data as Record<string, unknown>;
      for (const [key, value] of Object.entries(body)) expectEqual(updated[key], value, `the answer holds ${key}`, res);
      const got = await ctx.send('getField', fieldParams(name, 'title'));
      expectEqual(expectOk(got).data, updated, 'GET answers the updated field', got);
    },
  }),
  defineCheck({
    id: 'fields.update.guards',
    section: 'Fields: rules for updating fields (6); rules for creating fields (5, 6, 8)',
    rule: 'On update canRead/canWrite null removes the guard; a guard may name the field itself once it exists; an uncompilable guard answers 400 and keeps the old one; canWrite on a function or reverse field answers 400, while canRead and canWrite: null are accepted.',
    scratchTables: ['guards'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('guards', {}, [
        field('amount', 'number', { canRead: 'true', canWrite: 'true' }), field('total', 'function', { expression: '1 + 1' }),
        field('back', 'reverse', { refTableName: ctx.scratch.name('guards') }),
      ]);
      const patch = (fieldName: string, body: Record<string, unknown>) => ctx.send('updateField', { ...fieldParams(name, fieldName), body });
      const removed = await patch('amount', { canRead: null });
      expectEqual([expectOk(removed).data.canRead, expectOk(removed).data.canWrite], [undefined, 'true'], 'canRead: null removes canRead and keeps canWrite', removed);
      const got = await ctx.send('getField', fieldParams(name, 'amount'));
      expectEqual(expectOk(got).data.canRead, undefined, 'GET has no canRead any more', got);
      const own = 'amount = null or amount < 10';
      const self = await patch('amount', { canWrite: own });
      expectEqual(expectOk(self, 'a guard naming the field itself is accepted on update').data.canWrite, own, 'the guard is stored as sent', self);
      expectError(await patch('amount', { canWrite: '(amount' }), 400, 'an uncompilable guard answers 400');
      const kept = await ctx.send('getField', fieldParams(name, 'amount'));
      expectEqual(expectOk(kept).data.canWrite, own, 'the refused guard left the old one', kept);
      const cleared = await patch('amount', { canWrite: null });
      expectEqual(expectOk(cleared).data.canWrite, undefined, 'canWrite: null removes canWrite', cleared);
      for (const [computed, type] of [['total', 'function'], ['back', 'reverse']]) {
        expectError(await patch(computed!, { canWrite: 'true' }), 400, `canWrite on a ${type} field answers 400`);
        expectOk(await patch(computed!, { canRead: 'true' }), `canRead on a ${type} field is accepted`);
        expectOk(await patch(computed!, { canWrite: null }), `canWrite: null on a ${type} field is accepted`);
      }
    },
  }),
  defineCheck({
    id: 'fields.update.expressions',
    section: 'Fields: rules for updating fields (3, 4)',
    rule: 'On update options sets the selection expression of a dchoice and optionName, optionIcon, optionColor its display formulas; expression sets the expression of a function field: 200 with the field holding them.',
    scratchTables: ['expressions'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('expressions', {}, [
        field('title', 'string'), field('amount', 'number'),
        field('pick', 'dchoice', { options: `select ${ctx.scratch.name('expressions')}`, optionName: 'title' }),
        field('total', 'function', { expression: '1 + 1' }),
      ]);
      const body = { options: `select ${name} where amount > 0`, optionName: 'title', optionIcon: 'i', optionColor: 'c' };
      const pick = await ctx.send('updateField', { ...fieldParams(name, 'pick'), body });
      const updated = expectOk(pick).data as Record<string, unknown>;
      for (const [key, value] of Object.entries(body)) expectEqual(updated[key], value, `the dchoice holds the new ${key}`, pick);
      const total = await ctx.send('updateField', { ...fieldParams(name, 'total'), body: { expression: 'amount * 2' } });
      expectEqual(expectOk(total).data.expression, 'amount * 2', 'the function holds the new expression', total);
    },
  }),
  defineCheck({
    id: 'fields.update.options-replace',
    section: 'Fields: rules for updating fields (1)',
    rule: 'options replaces the whole option list of a choice field: options sent with their id keep it, options without id are new, others are gone.',
    scratchTables: ['options'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('options', {}, [field('stage', 'choice', { options: [{ name: 'lead' }, { name: 'lost' }] })]);
      const before = expectOk(await ctx.send('getField', fieldParams(name, 'stage'))).data.options as { id: string; name: string }[];
      const lead = before.find((o) => o.name === 'lead')!;
      const res = await ctx.send('updateField', { ...fieldParams(name, 'stage'), body: { options: [{ id: lead.id, name: 'lead' }, { name: 'won' }] } });
      expectStatus(res, 200);
      const after = expectOk(res).data.options as { id: string; name: string }[];
      expectEqual(after.map((o) => o.name), ['lead', 'won'], 'the list is the one sent', res);
      expectEqual(after[0]!.id, lead.id, 'the option sent with its id keeps it', res);
      expectTrue(typeof after[1]!.id === 'string' && !before.some((o) => o.id === after[1]!.id), 'the new option gets a new id', 'a new id', after[1], res);
    },
  }),
  defineCheck({
    id: 'fields.update.options-wrong-kind-400',
    section: 'Fields: rules for updating fields (2)',
    rule: 'An options array to a field other than choice/multi, an options expression to a field other than dchoice/dmulti, or optionName, optionIcon, optionColor to a field other than dchoice/dmulti answers 400, and the field is unchanged.',
    scratchTables: ['wrong_kind'],
    async run(ctx) {
      const name = ctx.scratch.name('wrong_kind');
      await ctx.scratch.create('wrong_kind', {}, [
        field('title', 'string'), field('stage', 'choice', { options: [{ name: 'a' }] }), field('tags', 'multi', { options: [{ name: 'b' }] }),
        field('pick', 'dchoice', { options: `select ${name}` }),
      ]);
      const cases: [string, Record<string, unknown>, string][] = [
        ['title', { options: [{ name: 'x' }] }, 'an options array to a string field'],
        ['pick', { options: [{ name: 'x' }] }, 'an options array to a dchoice field'],
        ['stage', { options: `select ${name}` }, 'an options expression to a choice field'],
        ['title', { options: `select ${name}` }, 'an options expression to a string field'],
        ['stage', { optionName: 'title' }, 'optionName to a choice field'],
        ['title', { optionIcon: 'x' }, 'optionIcon to a string field'],
        ['tags', { optionColor: 'x' }, 'optionColor to a multi field'],
      ];
      for (const [fieldName, body, what] of cases) {
        const before = expectOk(await ctx.send('getField', fieldParams(name, fieldName))).data;
        expectError(await ctx.send('updateField', { ...fieldParams(name, fieldName), body }), 400, `${what} answers 400`);
        const after = await ctx.send('getField', fieldParams(name, fieldName));
        expectEqual(expectOk(after).data, before, `${what} leaves the field as it was`, after);
      }
    },
  }),
  defineCheck({
    id: 'fields.batch-update.rules',
    section: 'Fields: rules for updating fields (7)',
    rule: 'A batch update is one transaction: a repeated fieldName, a rename onto an existing name, an item without fieldName, a later item sending an options expression to a choice or an uncompilable guard, or an empty batch answers 400, an unknown field 404, and nothing changes.',
    scratchTables: ['batch_update'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('batch_update', {}, [field('a', 'string'), field('b', 'string'), field('c', 'choice', { options: [{ name: 'x' }] })]);
      const params = { tableName: name };
      const before = expectOk(await ctx.send('listFields', { params })).data;
      for (const [what, body] of [
        ['an item without fieldName', [{ required: true }]],
        ['a later options expression to a choice', [{ fieldName: 'a', name: 'a2', required: true }, { fieldName: 'c', options: `select ${name}` }]],
        ['a later uncompilable guard', [{ fieldName: 'a', name: 'a2' }, { fieldName: 'b', canRead: ')' }]],
        ['an empty batch', []],
      ] as const) {
        expectError(await ctx.send('updateFields', { params, body }), 400, `${what} answers 400`);
      }
      const after = await ctx.send('listFields', { params });
      expectEqual(expectOk(after).data, before, 'the refused batches changed no field', after);
      expectError(await ctx.send('updateFields', { params, body: [{ fieldName: 'a', required: true }, { fieldName: 'a', index: true }] }), 400, 'a repeated fieldName answers 400');
      expectError(await ctx.send('updateFields', { params, body: [{ fieldName: 'a', name: 'b' }] }), 400, 'renaming onto an existing name answers 400');
      expectError(await ctx.send('updateFields', { params, body: [{ fieldName: 'a', name: 'd' }, { fieldName: 'nope', required: true }] }), 404, 'an unknown field answers 404');
      expectEqual(await fieldNames(ctx, name), ['a', 'b', 'c'], 'the failed batches changed nothing');
      const ok = await ctx.send('updateFields', { params, body: [{ fieldName: 'a', name: 'd' }, { fieldName: 'b', required: true }] });
      expectStatus(ok, 200);
      const fields = expectOk(ok).data;
      expectEqual(fields.map((f) => [f.name, f.required === true]), [['d', false], ['b', true]], 'a good batch answers 200 with the updated fields, in request order', ok);
    },
  }),
];
