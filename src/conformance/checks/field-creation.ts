import { CREATABLE_FIELD_TYPES, FIELD_TYPES } from '../../api/index.ts';
import { defineCheck } from '../check.ts';
import { expectEqual, expectError, expectOk, expectStatus, expectTrue, show } from '../expectations.ts';
import type { Exchange } from '../probe.ts';
import { fieldNames, fieldParams } from './field-requests.ts';
import { field } from './fixtures.ts';
import { Tally } from './tally.ts';

/** Fields: single and batch create, with the rules of the description for creating fields. */

export const fieldCreationChecks = [
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
    id: 'fields.create.reference-without-table',
    kind: 'observation',
    section: 'Resources: Field (refTableName)',
    rule: 'refTableName is "string or null … default null" for reference and reverse fields: what a create without it, or with null, answers is not shown. Whether each is accepted, and the refTableId of an accepted one.',
    emulatorChoice: '400 for each (refTableName is required for reference and reverse fields): a field with no table could hold no record id, nor list any record',
    scratchTables: ['ref_none'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('ref_none');
      const tally = new Tally();
      for (const [fieldName, type, extra] of [
        ['ref_absent', 'reference', {}], ['ref_null', 'reference', { refTableName: null }], ['back_absent', 'reverse', {}],
      ] as const) {
        const res = await ctx.send('createField', { params: { tableName: name }, body: field(fieldName, type, extra) });
        const accepted = res.status >= 200 && res.status < 300;
        tally.same(`${type} ${fieldName}`, accepted ? `accepted, refTableId ${show(expectOk(res).data.refTableId)}` : `HTTP ${res.status}`, 'HTTP 400');
      }
      return tally.result('reference and reverse fields without a table');
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
];
