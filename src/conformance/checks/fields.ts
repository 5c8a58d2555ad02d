import { CREATABLE_FIELD_TYPES, FIELD_TYPES } from '../../api/index.ts';
import { defineCheck, type CheckContext } from '../check.ts';
import { expectEqual, expectError, expectOk, expectStatus, expectTrue } from '../expectations.ts';
import type { Exchange } from '../probe.ts';
import { field } from './fixtures.ts';

/** Fields: single and batch create, read, update and delete, with the rules of the description. */

function fieldParams(tableName: string, fieldName: string) {
  return { params: { tableName, fieldName } };
}

async function fieldNames(ctx: CheckContext, tableName: string): Promise<string[]> {
  const res = await ctx.send('listFields', { params: { tableName } });
  return expectOk(res, 'GET fields succeeds').data.map((f) => f.name);
}

export const fieldChecks = [
  defineCheck({
    id: 'fields.create-201',
    section: 'Fields',
    rule: 'POST fields creates one field and answers 201 { data: Field }; GET of the field answers 200 with it, and the list holds it.',
    scratchTables: ['field_create'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('field_create');
      const res = await ctx.send('createField', { params: { tableName: name }, body: field('title', 'string', { required: true }) });
      expectStatus(res, 201);
      const created = expectOk(res).data;
      expectEqual([created.name, created.type], ['title', 'string'], 'the answer is the new field', res);
      const got = await ctx.send('getField', fieldParams(name, 'title'));
      expectStatus(got, 200);
      expectEqual([expectOk(got).data.name, expectOk(got).data.type], ['title', 'string'], 'GET answers the field', got);
      expectEqual(await fieldNames(ctx, name), ['title'], 'the list holds the field');
    },
  }),
  defineCheck({
    id: 'fields.create.every-type',
    section: 'Resources: field types that can be created',
    rule: 'Each creatable type (string, html, number, boolean, choice, dchoice, multi, dmulti, file, date, timestamp, time, timeinterval, appointment, icon, color, user, reference, reverse, function) can be created: 201, and GET answers it with that type; the internal types cannot (400).',
    scratchTables: ['types', 'types_target'],
    async run(ctx) {
      const target = await ctx.scratch.create('types_target', {}, [field('title', 'string')]);
      const { name } = await ctx.scratch.create('types');
      for (const type of CREATABLE_FIELD_TYPES) {
        const extra: Record<string, unknown> = {};
        // Expressions of dynamic choices and functions are checked after the save (rule 4): any text does.
        if (type === 'dchoice' || type === 'dmulti') extra.options = `select ${target.name}`;
        if (type === 'function') extra.expression = '1 + 1';
        if (type === 'reference' || type === 'reverse') extra.refTableName = target.name;
        const fieldName = `t_${type.toLowerCase()}`;
        const res = await ctx.send('createField', { params: { tableName: name }, body: field(fieldName, type, extra) });
        expectStatus(res, 201, `creating a ${type} field answers 201`);
        const got = await ctx.send('getField', fieldParams(name, fieldName));
        expectEqual([expectOk(got).data.name, expectOk(got).data.type], [fieldName, type], `GET answers the ${type} field`, got);
      }
      for (const type of FIELD_TYPES.filter((t) => !(CREATABLE_FIELD_TYPES as readonly string[]).includes(t))) {
        const res = await ctx.send('createField', { params: { tableName: name }, body: field(`i_${type.toLowerCase()}`, type as 'string') });
        expectError(res, 400, `creating a field of the internal type ${type} answers 400`);
      }
      const names = await fieldNames(ctx, name);
      expectEqual(names.length, CREATABLE_FIELD_TYPES.length, 'the table has one field per creatable type and no other');
    },
  }),
  defineCheck({
    id: 'fields.create.choice-option-ids',
    section: 'Fields: rules for creating fields (1)',
    rule: 'A choice field gets its initial options, each with a service-assigned id, in the create answer and in the single-field GET.',
    scratchTables: ['choice'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('choice');
      const body = field('stage', 'choice', { options: [{ name: 'lead' }, { name: 'won' }] });
      const res = await ctx.send('createField', { params: { tableName: name }, body });
      expectStatus(res, 201);
      const options = expectOk(res).data.options;
      expectTrue(Array.isArray(options) && options.length === 2 && options.every((o) => typeof o.id === 'string' && o.id !== ''),
        'each option has an id', 'two options with ids', options, res);
      const got = await ctx.send('getField', fieldParams(name, 'stage'));
      const again = expectOk(got).data.options;
      expectEqual(Array.isArray(again) ? again.map((o) => [o.id, o.name]) : again, (options as { id: string; name: string }[]).map((o) => [o.id, o.name]),
        'GET answers the same options with the same ids', got);
    },
  }),
  defineCheck({
    id: 'fields.create.invalid-expression-201',
    section: 'Fields: rules for creating fields (3, 4)',
    rule: 'A function field whose expression does not parse is still created (201); the answer carries expressionErrors.',
    scratchTables: ['expr'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('expr');
      const res = await ctx.send('createField', { params: { tableName: name }, body: field('calc', 'function', { expression: '1 + (' }) });
      expectStatus(res, 201);
      const errors = expectOk(res).data.expressionErrors;
      expectTrue(Array.isArray(errors) && errors.length > 0, 'the answer carries expressionErrors', 'a non-empty expressionErrors array', errors, res);
      expectEqual(await fieldNames(ctx, name), ['calc'], 'the field exists');
    },
  }),
  defineCheck({
    id: 'fields.create.guard-uncompilable-400',
    section: 'Fields: rules for creating fields (5)',
    rule: 'A canRead or canWrite that does not parse answers 400, and the field is not created.',
    scratchTables: ['guard'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('guard');
      expectError(await ctx.send('createField', { params: { tableName: name }, body: field('secret', 'string', { canRead: '((' }) }), 400);
      expectError(await ctx.send('createField', { params: { tableName: name }, body: field('secret', 'string', { canWrite: 'and and' }) }), 400);
      expectEqual(await fieldNames(ctx, name), [], 'no field was created');
    },
  }),
  defineCheck({
    id: 'fields.create.can-write-computed-400',
    section: 'Fields: rules for creating fields (6)',
    rule: 'canWrite on a function or reverse field answers 400 and creates nothing; canRead on them is accepted.',
    scratchTables: ['canwrite'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('canwrite');
      const computed = [field('calc', 'function', { expression: '1' }), field('back', 'reverse', { refTableName: name })];
      for (const body of computed) {
        expectError(await ctx.send('createField', { params: { tableName: name }, body: { ...body, canWrite: 'true' } }), 400, `canWrite on a ${body.type} field answers 400`);
      }
      expectEqual(await fieldNames(ctx, name), [], 'no field was created');
      for (const body of computed) {
        expectStatus(await ctx.send('createField', { params: { tableName: name }, body: { ...body, canRead: 'true' } }), 201, `canRead on a ${body.type} field answers 201`);
      }
    },
  }),
  defineCheck({
    id: 'fields.create.guard-self-400',
    section: 'Fields: rules for creating fields (8)',
    rule: 'A guard cannot reference the field being created (400, nothing created); it may reference another field of the table.',
    scratchTables: ['guard_self'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('guard_self', {}, [field('other', 'string')]);
      expectError(await ctx.send('createField', { params: { tableName: name }, body: field('secret', 'string', { canRead: 'secret != ""' }) }), 400, 'a guard naming the new field answers 400');
      expectEqual(await fieldNames(ctx, name), ['other'], 'no field was created');
      expectStatus(await ctx.send('createField', { params: { tableName: name }, body: field('secret', 'string', { canRead: 'other != ""' }) }), 201, 'a guard naming another field answers 201');
    },
  }),
  defineCheck({
    id: 'fields.create.properties',
    section: 'Fields: create-field object',
    rule: 'A field create keeps each property given (labels, variant, required, unique, index, search, defaultValue, onUpdate, readRoles, writeRoles, canRead, canWrite) and accepts showInTable: 201, and GET answers the same field.',
    scratchTables: ['field_full'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('field_full', {}, [field('plain', 'string')]);
      const body = field('full', 'string', {
        labels: { '': 'Full', de: 'Voll' }, variant: 'email', required: true, unique: true, index: true, search: true,
        defaultValue: 'x@example.com', onUpdate: 'full := lower(full)', readRoles: ['admin', 'editor'], writeRoles: ['admin'],
        canRead: 'plain != "hidden"', canWrite: 'true',
      });
      const res = await ctx.send('createField', { params: { tableName: name }, body: { ...body, showInTable: false } });
      expectStatus(res, 201);
      const created = expectOk(res).data as Record<string, unknown>;
      for (const [key, value] of Object.entries(body)) expectEqual(created[key], value, `the answer keeps ${key}`, res);
      const got = await ctx.send('getField', fieldParams(name, 'full'));
      const read = expectOk(got).data as Record<string, unknown>;
      for (const [key, value] of Object.entries(body)) expectEqual(read[key], value, `GET answers ${key} as created`, got);
    },
  }),
  defineCheck({
    id: 'fields.create.request-limits-400',
    section: 'Resources: Field, Option; Limits',
    rule: 'A field create answers 400 and creates nothing for a label of 0 or 101 characters, an option named "", an option order below 0, an option with another property, readRoles empty or writeRoles of 4 items, a role other than admin/editor/user, a variant not in the list, or a property the create-field object does not have.',
    scratchTables: ['field_limits'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('field_limits');
      const cases: [string, Record<string, unknown>][] = [
        ['an empty label', field('x', 'string', { labels: { '': '' } })],
        ['a 101-character label', field('x', 'string', { labels: { '': 'x'.repeat(101) } })],
        ['an option named ""', field('x', 'choice', { options: [{ name: '' }] })],
        ['an option order of -1', field('x', 'choice', { options: [{ name: 'a', order: -1 }] })],
        ['an option with another property', field('x', 'choice', { options: [{ name: 'a', extra: 1 }] })],
        ['readRoles []', field('x', 'string', { readRoles: [] })],
        ['writeRoles of 4 items', field('x', 'string', { writeRoles: ['admin', 'editor', 'user', 'admin'] })],
        ['the role owner', field('x', 'string', { readRoles: ['owner'] })],
        ['the variant fancy', field('x', 'string', { variant: 'fancy' })],
        ['the property colour', { ...field('x', 'string'), colour: 'red' }],
      ];
      for (const [what, body] of cases) {
        expectError(await ctx.send('createField', { params: { tableName: name }, body }), 400, `${what} answers 400`);
      }
      expectEqual(await fieldNames(ctx, name), [], 'no field was created');
    },
  }),
  defineCheck({
    id: 'fields.create.expressions',
    section: 'Fields: rules for creating fields (2, 3)',
    rule: 'A dchoice keeps its options expression and optionName, optionIcon, optionColor; a function keeps its expression: 201, and GET answers them.',
    scratchTables: ['field_exprs'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('field_exprs', {}, [field('title', 'string'), field('price', 'number'), field('quantity', 'number')]);
      const pick = { options: `select ${name} where price > 0`, optionName: 'title', optionIcon: 'icon', optionColor: 'color' };
      const cases: [string, Record<string, unknown>][] = [
        ['pick', { ...field('pick', 'dchoice', pick) }], ['total', { ...field('total', 'function', { expression: 'price * quantity' }) }],
      ];
      for (const [fieldName, body] of cases) {
        const res = await ctx.send('createField', { params: { tableName: name }, body });
        expectStatus(res, 201, `creating ${fieldName} answers 201`);
        const got = await ctx.send('getField', fieldParams(name, fieldName));
        const answers: [Record<string, unknown>, Exchange][] = [[expectOk(res).data, res], [expectOk(got).data, got]];
        for (const [data, answer] of answers) {
          for (const key of ['options', 'optionName', 'optionIcon', 'optionColor', 'expression']) {
            if (key in body) expectEqual(data[key], body[key], `${fieldName} keeps ${key}`, answer);
          }
        }
      }
    },
  }),
  defineCheck({
    id: 'fields.create.reference',
    section: 'Resources: Field (refTableName, refTableId)',
    rule: 'A reference or reverse field names its table by refTableName; the answer carries refTableId, the id of that table; a table may reference itself.',
    scratchTables: ['ref_from', 'ref_to'],
    async run(ctx) {
      const target = await ctx.scratch.create('ref_to');
      const { name } = await ctx.scratch.create('ref_from');
      for (const [fieldName, type, refTableName, id] of [
        ['ref', 'reference', target.name, target.id], ['back', 'reverse', target.name, target.id], ['parent', 'reference', name, undefined],
      ] as const) {
        const res = await ctx.send('createField', { params: { tableName: name }, body: field(fieldName, type, { refTableName }) });
        expectStatus(res, 201, `creating the ${type} field ${fieldName} answers 201`);
        const self = id ?? expectOk(await ctx.send('getTable', { params: { tableName: name } })).data.id;
        expectEqual(expectOk(res).data.refTableId, self, `${fieldName} carries the id of ${refTableName} as refTableId`, res);
      }
    },
  }),
  defineCheck({
    id: 'fields.create.unknown-table-404',
    section: 'Fields',
    rule: 'POST fields of a table or a module that does not exist answers 404.',
    async run(ctx) {
      const body = field('x', 'string');
      expectError(await ctx.send('createField', { params: { tableName: ctx.missingName }, body }), 404, 'an unknown table answers 404');
      expectError(await ctx.send('createField', { params: { moduleName: ctx.missingName, tableName: ctx.missingName }, body }), 404, 'an unknown module answers 404');
    },
  }),
  defineCheck({
    id: 'fields.create.exists-400',
    section: 'Fields: rules for creating fields (9)',
    rule: 'Creating a field that already exists answers 400, single or in a batch.',
    scratchTables: ['field_twice'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('field_twice', {}, [field('title', 'string')]);
      expectError(await ctx.send('createField', { params: { tableName: name }, body: field('title', 'string') }), 400);
      expectError(await ctx.send('createFields', { params: { tableName: name }, body: [field('other', 'string'), field('title', 'number')] }), 400);
      expectEqual(await fieldNames(ctx, name), ['title'], 'the batch created nothing');
    },
  }),
  defineCheck({
    id: 'fields.batch-create.transactional',
    section: 'Fields: rules for creating fields (6, 8, 9)',
    rule: 'A batch create is one transaction: duplicate names in the batch, a field that exists, an uncompilable guard, a guard naming a field of the same batch, a type that cannot be created, canWrite on a function field, or an empty batch answer 400 and create none; a good batch answers 201 with its fields in order.',
    scratchTables: ['batch'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('batch', {}, [field('a', 'string')]);
      const params = { tableName: name };
      const cases: [string, unknown[]][] = [
        ['duplicate names in the batch', [field('f1', 'string'), field('f1', 'number')]],
        ['a field that exists', [field('f1', 'string'), field('a', 'string')]],
        ['an uncompilable guard', [field('f1', 'string'), field('f2', 'string', { canRead: '(' })]],
        ['a guard naming a field of the same batch', [field('f1', 'string'), field('f2', 'string', { canRead: 'f1 = 1' })]],
        ['a type that cannot be created', [field('f1', 'string'), field('f2', 'rowId' as 'string')]],
        ['canWrite on a function field', [field('f1', 'string'), field('f2', 'function', { expression: '1', canWrite: 'true' })]],
        ['an empty batch', []],
      ];
      for (const [what, body] of cases) {
        expectError(await ctx.send('createFields', { params, body }), 400, `${what} answers 400`);
        expectEqual(await fieldNames(ctx, name), ['a'], `${what} creates no field`);
      }
      const ok = await ctx.send('createFields', { params, body: [field('b', 'string'), field('c', 'number')] });
      expectStatus(ok, 201);
      expectEqual(expectOk(ok).data.map((f) => f.name), ['b', 'c'], 'a good batch answers 201 with its fields in order', ok);
      expectEqual(await fieldNames(ctx, name), ['a', 'b', 'c'], 'the list holds the new fields after the old one');
    },
  }),
  defineCheck({
    id: 'fields.list.paging',
    section: 'Fields',
    rule: 'GET fields pages with limit and offset: { data, page_info } with has_more true while fields remain.',
    scratchTables: ['paged_fields'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('paged_fields', {}, [field('a', 'string'), field('b', 'string'), field('c', 'string')]);
      const first = await ctx.send('listFields', { params: { tableName: name }, query: { limit: 2 } });
      const page = expectOk(first);
      expectEqual(page.data.length, 2, 'limit=2 gives two fields', first);
      expectEqual(page.page_info, { has_more: true, limit: 2, offset: 0 }, 'page_info of the first page', first);
      const second = await ctx.send('listFields', { params: { tableName: name }, query: { limit: 2, offset: 2 } });
      const rest = expectOk(second);
      expectEqual(rest.page_info, { has_more: false, limit: 2, offset: 2 }, 'page_info of the last page', second);
      expectEqual([...page.data, ...rest.data].map((f) => f.name).sort(), ['a', 'b', 'c'], 'the pages hold every field once', second);
    },
  }),
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
  defineCheck({
    id: 'fields.single.unknown-field-status',
    kind: 'observation',
    section: 'Errors',
    rule: 'Errors of the single-field GET, PATCH and DELETE: not shown. What they answer for a field that does not exist.',
    emulatorChoice: '404 for each',
    scratchTables: ['unknown_field'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('unknown_field');
      const params = fieldParams(name, 'nope');
      const statuses = [
        (await ctx.send('getField', params)).status,
        (await ctx.send('updateField', { ...params, body: { required: true } })).status,
        (await ctx.send('deleteField', params)).status,
      ];
      return { observed: `GET ${statuses[0]}, PATCH ${statuses[1]}, DELETE ${statuses[2]}`, asEmulator: statuses.every((s) => s === 404) };
    },
  }),
];
