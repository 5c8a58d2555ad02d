import { defineCheck, type CheckContext } from '../check.ts';
import { expectEqual, expectError, expectOk, expectTrue, show } from '../expectations.ts';
import { field } from './fixtures.ts';
import {
  COMPUTED_FIELDS, TARGET_COUNT, WRITABLE_FIELDS, allTypeFields, caseLabel, sameValue, valueCases, type CaseContext, type ValueCase,
} from './record-value-cases.ts';
import { Tally } from './tally.ts';

/** Record values type by type: the value table of the description, create and update shapes. */

interface ValuesTable {
  table: string;
  cases: CaseContext;
}

/** `<purpose>_target` with TARGET_COUNT records, and `<purpose>` with a field of every type. */
async function valuesTable(ctx: CheckContext, purpose: string): Promise<ValuesTable> {
  const target = await ctx.scratch.create(`${purpose}_target`, {}, [field('title', 'string')]);
  const made = await ctx.send('createRecords', { params: { tableName: target.name }, body: { records: Array.from({ length: TARGET_COUNT }, (_, i) => ({ title: `t${i}` })) } });
  const targets = expectOk(made, 'creating the target records succeeds').data.ids;
  const { name: table } = await ctx.scratch.create(purpose, {}, allTypeFields(target.name));
  const got = await ctx.send('getTable', { params: { tableName: table } });
  const options = new Map<string, string>();
  for (const f of expectOk(got, 'GET of the table of every type succeeds').data.fields ?? []) {
    if (Array.isArray(f.options)) for (const o of f.options) if (o.id !== undefined) options.set(`${f.name}.${o.name}`, o.id);
  }
  const option = (fieldName: string, optionName: string): string => {
    const id = options.get(`${fieldName}.${optionName}`);
    if (id === undefined) throw new Error(`the field ${fieldName} of ${table} has no option ${optionName} with an id`);
    return id;
  };
  return { table, cases: { option, targets } };
}

function valuesTables(purpose: string): string[] {
  return [purpose, `${purpose}_target`];
}

async function createIds(ctx: CheckContext, tableName: string, records: Record<string, unknown>[], what: string): Promise<string[]> {
  const res = await ctx.send('createRecords', { params: { tableName }, body: { records } });
  const ids = expectOk(res, what).data.ids;
  expectEqual(ids.length, records.length, 'POST records answers one id per record', res);
  return ids;
}

/** Every record of the table (at most 100 here), as id → values. */
async function readAll(ctx: CheckContext, tableName: string): Promise<Map<string, Record<string, unknown>>> {
  const res = await ctx.send('listRecords', { params: { tableName }, query: { limit: 100 } });
  return new Map(expectOk(res, 'GET records succeeds').data.map((r) => [r.id, r.values]));
}

/** Each case, applied to the record of the same index in `ids`, reads back as its stored value. */
async function expectReadBack(ctx: CheckContext, table: string, cases: CaseContext, applied: ValueCase[], ids: string[], as: string): Promise<void> {
  const all = await readAll(ctx, table);
  applied.forEach((c, i) => {
    const got = all.get(ids[i]!)?.[c.field];
    expectTrue(sameValue(c.field, c.stored, got, c.sent, cases), `${caseLabel(c)} reads back as ${as}`, show(c.stored), got);
  });
}

function pick(cases: CaseContext, on: ValueCase['on'], accepted: boolean, open: boolean): ValueCase[] {
  return valueCases(cases).filter((c) => c.on === on && c.accepted === accepted && c.open === open);
}

/** A record holding an accepted create value of each field the value table covers. */
function fullRecord(cases: CaseContext, withOpen: boolean): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const c of valueCases(cases)) {
    if (c.on === 'create' && c.accepted && (withOpen || !c.open) && !(c.field in record)) record[c.field] = c.sent;
  }
  return record;
}

/** Applies accepted update cases, one record each, in one PATCH; answers the ids. */
async function updateEach(ctx: CheckContext, table: string, cases: ValueCase[]): Promise<string[]> {
  const ids = await createIds(ctx, table, cases.map(() => ({})), 'creating empty records succeeds');
  const res = await ctx.send('updateRecords', { params: { tableName: table }, body: { records: cases.map((c, i) => ({ id: ids[i], [c.field]: c.sent })) } });
  expectOk(res, 'PATCH records with one accepted update shape per record succeeds');
  expectEqual(res.body, { data: { updatedIds: ids } }, 'PATCH records answers { data: { updatedIds } }, in order', res);
  return ids;
}

/** Whether a value read back is empty: `null`, or the field left out. */
function isEmpty(value: unknown): boolean {
  return value === null || value === undefined;
}

export const recordValueChecks = [
  defineCheck({
    id: 'records.values.create-shapes',
    section: 'Resources: value shapes by field type',
    rule: 'A create accepts each shape of the value table (string, html, number, boolean, choice by name, multi by names, color, date, timestamp, time, timeinterval, appointment, icon name, file, user, reference), and the list answers the value sent (the same instant, the same option).',
    scratchTables: valuesTables('v_create'),
    async run(ctx) {
      const { table, cases } = await valuesTable(ctx, 'v_create');
      const accepted = pick(cases, 'create', true, false);
      const ids = await createIds(ctx, table, accepted.map((c) => ({ [c.field]: c.sent })), 'a create with every accepted shape succeeds');
      await expectReadBack(ctx, table, cases, accepted, ids, 'the value sent');
    },
  }),
  defineCheck({
    id: 'records.values.create-invalid-400',
    section: 'Resources: value shapes by field type',
    rule: 'A create value outside its type\'s shape answers 400 and creates nothing: a number for a string, a numeric string for a number, 1/0/"true" for a boolean, an unknown option, an array for a choice, a string for a multi, #abc for a color, an impossible date, milliseconds or a timestamp for a date, milliseconds or no Z for a timestamp, 9:30 or 24:00 for a time, the update shape of a time interval, a closed range for an appointment, a string id or a missing record for a reference.',
    scratchTables: valuesTables('v_create_bad'),
    async run(ctx) {
      const { table, cases } = await valuesTable(ctx, 'v_create_bad');
      for (const c of pick(cases, 'create', false, false)) {
        expectError(await ctx.send('createRecords', { params: { tableName: table }, body: { records: [{ [c.field]: c.sent }] } }), 400, `${caseLabel(c)} answers 400`);
      }
      expectEqual((await readAll(ctx, table)).size, 0, 'the refused creates created no record');
    },
  }),
  defineCheck({
    id: 'records.values.update-shapes',
    section: 'Resources: value shapes by field type; Records: rules (3)',
    rule: 'An update accepts each update shape of the value table (a numeric string for a number, an array for a choice, milliseconds or an ISO 8601 string, with Z or an offset, for a date, milliseconds for a timestamp, HH:MM:SS for a time interval, one instant, with Z or an offset, for an appointment, a JSON-encoded icon, …), answers { data: { updatedIds } }, and the list answers the value set.',
    scratchTables: valuesTables('v_update'),
    async run(ctx) {
      const { table, cases } = await valuesTable(ctx, 'v_update');
      const accepted = pick(cases, 'update', true, false);
      const ids = await updateEach(ctx, table, accepted);
      await expectReadBack(ctx, table, cases, accepted, ids, 'the value set');
    },
  }),
  defineCheck({
    id: 'records.values.update-invalid-400',
    section: 'Resources: value shapes by field type; Records: rules (1, 3)',
    rule: 'An update value outside its type\'s update shape answers 400 and leaves the record as it was: 1/0/"false" for a boolean, a plain string for a multi, a non-numeric string for a number, an icon name instead of its JSON, the create shape of a time interval, a missing record for a reference, ….',
    scratchTables: valuesTables('v_update_bad'),
    async run(ctx) {
      const { table, cases } = await valuesTable(ctx, 'v_update_bad');
      const [id] = await createIds(ctx, table, [fullRecord(cases, false)], 'a record with a value in every field is created');
      const before = (await readAll(ctx, table)).get(id!);
      for (const c of pick(cases, 'update', false, false)) {
        expectError(await ctx.send('updateRecords', { params: { tableName: table }, body: { records: [{ id, [c.field]: c.sent }] } }), 400, `${caseLabel(c)} answers 400`);
      }
      expectEqual((await readAll(ctx, table)).get(id!), before, 'the refused updates changed nothing');
    },
  }),
  defineCheck({
    id: 'records.update.null-clears',
    section: 'Resources: value shapes by field type',
    rule: 'On update any field may be set to null to clear its value: every type of the value table reads back empty; null for a computed field (function, reverse) is accepted too.',
    scratchTables: valuesTables('v_null'),
    async run(ctx) {
      const { table, cases } = await valuesTable(ctx, 'v_null');
      const full = fullRecord(cases, false);
      const [id] = await createIds(ctx, table, [full], 'a record with a value in every field is created');
      const before = (await readAll(ctx, table)).get(id!) ?? {};
      for (const name of Object.keys(full)) expectTrue(!isEmpty(before[name]), `the ${name} value was stored`, 'a value', before[name]);
      const res = await ctx.send('updateRecords', { params: { tableName: table }, body: { records: [{ id, ...Object.fromEntries(Object.keys(full).map((k) => [k, null])) }] } });
      expectOk(res, 'an update setting every field to null succeeds');
      const after = (await readAll(ctx, table)).get(id!) ?? {};
      for (const name of Object.keys(full)) expectTrue(isEmpty(after[name]), `null cleared ${name}`, 'null or absent', after[name], res);
      // "any field": what a computed field then reads is its computation, which the rule leaves open.
      for (const name of COMPUTED_FIELDS) {
        expectOk(await ctx.send('updateRecords', { params: { tableName: table }, body: { records: [{ id, [name]: null }] } }), `null for the computed field ${name} is accepted on update`);
      }
    },
  }),
  defineCheck({
    id: 'records.values.returned-forms',
    kind: 'observation',
    section: 'Resources: value shapes by field type',
    rule: 'The form a value is returned in: not shown (the value table gives request shapes). The exact text of each accepted value read back.',
    emulatorChoice: 'one canonical form (docs/emulator.md, Values): timestamps with milliseconds, choices and multis as option ids, an appointment with millisecond ends, an icon as its name or as JSON in the order icon, color, filling',
    scratchTables: valuesTables('v_forms'),
    async run(ctx) {
      const { table, cases } = await valuesTable(ctx, 'v_forms');
      const created = pick(cases, 'create', true, false);
      const createdIds = await createIds(ctx, table, created.map((c) => ({ [c.field]: c.sent })), 'a create with every accepted shape succeeds');
      const updated = pick(cases, 'update', true, false);
      const updatedIds = await updateEach(ctx, table, updated);
      const all = await readAll(ctx, table);
      const tally = new Tally();
      created.forEach((c, i) => tally.same(caseLabel(c), all.get(createdIds[i]!)?.[c.field], c.stored));
      updated.forEach((c, i) => tally.same(caseLabel(c), all.get(updatedIds[i]!)?.[c.field], c.stored));
      return tally.result('values read back');
    },
  }),
  defineCheck({
    id: 'records.values.open-shapes',
    kind: 'observation',
    section: 'Resources: value shapes by field type',
    rule: 'Shapes the value table leaves open: an option\'s id for a choice or multi, [] or an array of two for a choice, a repeated multi option, a reversed appointment, an empty icon name, a JSON-encoded icon on create, a partial or extended icon JSON, fractional milliseconds, a date-time without Z or offset for a date, the date of a date-time whose offset puts it on another day than UTC, dchoice and dmulti values. Whether each is accepted, and how it reads back.',
    emulatorChoice: 'as docs/emulator.md, Values: option ids and names both accepted, [] clears a choice, an array of two for a choice, a repeated option, a reversed range, an empty icon name, an icon JSON with other keys or without icon (on create too, where a JSON-encoded icon is read as on update), fractional milliseconds and a date-time without Z or offset are 400; a date-time with an offset gives its date in UTC; dchoice/dmulti take record ids the selection gives, returned as strings',
    scratchTables: valuesTables('v_open'),
    async run(ctx) {
      const { table, cases } = await valuesTable(ctx, 'v_open');
      const params = { tableName: table };
      const open = valueCases(cases).filter((k) => k.open);
      // One record per update case, so one read at the end shows every value.
      const updateIds = await createIds(ctx, table, open.map(() => ({})), 'empty records are created');
      const tally = new Tally();
      const readBack: [ValueCase, string][] = [];
      for (const [i, c] of open.entries()) {
        let status: number;
        let id = updateIds[i]!;
        if (c.on === 'create') {
          const res = await ctx.send('createRecords', { params, body: { records: [{ [c.field]: c.sent }] } });
          status = res.status;
          if (status >= 200 && status < 300) id = expectOk(res).data.ids[0]!;
        } else {
          status = (await ctx.send('updateRecords', { params, body: { records: [{ id, [c.field]: c.sent }] } })).status;
        }
        const ok = status >= 200 && status < 300;
        tally.same(`${caseLabel(c)} status`, ok ? 'accepted' : `HTTP ${status}`, c.accepted ? 'accepted' : 'HTTP 400');
        if (ok && c.accepted) readBack.push([c, id]);
      }
      const all = await readAll(ctx, table);
      for (const [c, id] of readBack) tally.same(`${caseLabel(c)} reads back`, all.get(id)?.[c.field], c.stored);
      return tally.result('shapes the value table leaves open');
    },
  }),
  defineCheck({
    id: 'records.values.null-on-create',
    kind: 'observation',
    section: 'Resources: value shapes by field type',
    rule: 'null in a create, and null clearing a dchoice or dmulti on update: not shown.',
    emulatorChoice: 'null on create leaves every field empty; on update it clears dchoice and dmulti too',
    scratchTables: valuesTables('v_null_open'),
    async run(ctx) {
      const { table, cases } = await valuesTable(ctx, 'v_null_open');
      const tally = new Tally();
      const cleared = Object.fromEntries(WRITABLE_FIELDS.map((f) => [f, null]));
      const created = await ctx.send('createRecords', { params: { tableName: table }, body: { records: [cleared, fullRecord(cases, true)] } });
      tally.same('a create with null in every field', created.status >= 200 && created.status < 300 ? 'accepted' : `HTTP ${created.status}`, 'accepted');
      if (created.status >= 200 && created.status < 300) {
        const [empty, full] = expectOk(created).data.ids;
        const updated = await ctx.send('updateRecords', { params: { tableName: table }, body: { records: [{ id: full, dc: null, dm: null }] } });
        tally.same('null for dchoice and dmulti on update', updated.status, 200);
        const all = await readAll(ctx, table);
        for (const f of WRITABLE_FIELDS) tally.same(`${f} after null on create`, all.get(empty!)?.[f], null);
        tally.same('dc after null on update', all.get(full!)?.dc, null);
        tally.same('dm after null on update', all.get(full!)?.dm, null);
      }
      return tally.result('null');
    },
  }),
  defineCheck({
    id: 'records.values.computed-read-only',
    kind: 'observation',
    section: 'Resources: value shapes by field type',
    rule: 'Writing a computed field (function, reverse) other than null on update: not shown (the value table gives them no shape).',
    emulatorChoice: 'any value but null is 400 on create and on update; null on create is accepted, as on update, and changes nothing; listed with null (a function of an empty input)',
    scratchTables: valuesTables('v_computed'),
    async run(ctx) {
      const { table } = await valuesTable(ctx, 'v_computed');
      const params = { tableName: table };
      const [id] = await createIds(ctx, table, [{}], 'an empty record is created');
      const tally = new Tally();
      for (const name of COMPUTED_FIELDS) {
        for (const value of [1, 'x']) {
          tally.same(`create ${name} ← ${JSON.stringify(value)}`, (await ctx.send('createRecords', { params, body: { records: [{ [name]: value }] } })).status, 400);
          tally.same(`update ${name} ← ${JSON.stringify(value)}`, (await ctx.send('updateRecords', { params, body: { records: [{ id, [name]: value }] } })).status, 400);
        }
        const created = await ctx.send('createRecords', { params, body: { records: [{ [name]: null }] } });
        const accepted = created.status >= 200 && created.status < 300;
        tally.same(`create ${name} ← null`, accepted ? 'accepted' : `HTTP ${created.status}`, 'accepted');
        if (accepted) expectOk(await ctx.send('deleteRecords', { params, body: { records: expectOk(created).data.ids } }), 'the record made to test null on create is deleted');
      }
      const values = (await readAll(ctx, table)).get(id!);
      for (const name of COMPUTED_FIELDS) tally.same(`${name} as listed`, values?.[name], null);
      return tally.result('writes to computed fields');
    },
  }),
  defineCheck({
    id: 'records.list.filter-each-type',
    kind: 'observation',
    section: 'Records',
    rule: 'filter is an object of field name to value; how a value of each type is written in it: not shown. A record found by each type\'s value, in the create or the update shape.',
    emulatorChoice: 'a filter value is read like an update value (a numeric string, an option name, Unix milliseconds, a record id as a string) or else like a create value (an icon name, either form of a time interval); multi and dmulti match a value their array holds',
    scratchTables: valuesTables('v_filter'),
    async run(ctx) {
      const { table, cases } = await valuesTable(ctx, 'v_filter');
      const [id] = await createIds(ctx, table, [{ ...fullRecord(cases, true), ti: '08:00-09:00', ic: 'moon', s: 'filter me' }], 'a record with a value in every field is created');
      const [, , , , t5, t6] = cases.targets;
      const tally = new Tally();
      for (const [name, value] of [
        ['ic', 'moon'], ['ti', '08:00-09:00'], ['n', '1.5'], ['d', '2024-02-29'], ['c', 'closed'], ['m', 'green'],
        ['ts', Date.parse('2024-01-01T10:00Z')], ['r', cases.targets[0]], ['b', true], ['dm', Number(t6)], ['dc', t5],
      ] as const) {
        const res = await ctx.send('listRecords', { params: { tableName: table }, query: { filter: JSON.stringify({ s: 'filter me', [name]: value }) } });
        tally.same(`filter ${name} = ${JSON.stringify(value)}`, res.status === 200 ? expectOk(res).data.map((r) => r.id) : `HTTP ${res.status}`, [id]);
      }
      return tally.result('filters by each type');
    },
  }),
];
