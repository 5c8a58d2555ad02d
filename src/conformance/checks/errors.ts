import { gzipSync } from 'node:zlib';
import { defineCheck, type CheckContext } from '../check.ts';
import { expectError, expectOk } from '../expectations.ts';
import { field } from './fixtures.ts';
import { Tally } from './tally.ts';

/** Validation errors and limits: 400 with the error body; what the description leaves open, observed. */
export const errorChecks = [
  defineCheck({
    id: 'errors.missing-required-400',
    section: 'Errors',
    rule: 'A body missing required properties, or a name outside ^[a-z0-9_]+$, answers 400 with the error body.',
    scratchTables: ['missing_required'],
    async run(ctx) {
      expectError(await ctx.send('createTable', { body: {} }), 400, 'a table create without name answers 400');
      expectError(await ctx.send('createTable', { body: { name: 'Not-A-Name' } }), 400, 'a table name outside the pattern answers 400');
      const { name } = await ctx.scratch.create('missing_required');
      expectError(await ctx.send('createField', { params: { tableName: name }, body: { name: 'x', type: 'string' } }), 400, 'a field create without labels answers 400');
    },
  }),
  defineCheck({
    id: 'errors.invalid-field-type-400',
    section: 'Errors',
    rule: 'An invalid field type answers 400, and so does a type that cannot be created (any, rowId, …).',
    scratchTables: ['bad_type'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('bad_type');
      for (const type of ['nope', 'any', 'rowId']) {
        expectError(await ctx.send('createField', { params: { tableName: name }, body: field('x', type as 'string') }), 400, `type ${type} answers 400`);
      }
    },
  }),
  defineCheck({
    id: 'limits.name-length-400',
    section: 'Limits',
    rule: 'Table and field names are 1 to 100 characters: 101 characters answer 400.',
    scratchTables: ['long_name'],
    async run(ctx) {
      // Never a scratch table: an endpoint that creates it anyway has it deleted by the run's last sweep.
      const long = ctx.scratch.prefix + 'x'.repeat(101 - ctx.scratch.prefix.length);
      expectError(await ctx.send('createTable', { body: { name: long } }), 400, 'a 101-character table name answers 400');
      const { name } = await ctx.scratch.create('long_name');
      expectError(await ctx.send('createField', { params: { tableName: name }, body: field('f'.repeat(101), 'string') }), 400, 'a 101-character field name answers 400');
    },
  }),
  defineCheck({
    id: 'limits.changes-limit-range',
    kind: 'observation',
    section: 'Limits',
    rule: 'limit on record and schema changes is 1 to 100; the status for a limit outside: not shown.',
    emulatorChoice: '400 for limit=0 and limit=101',
    async run(ctx) {
      const statuses = await statusesOf(ctx, [0, 101]);
      return { observed: statuses.map(([limit, status]) => `limit=${limit}: HTTP ${status}`).join(', '), asEmulator: statuses.every(([, s]) => s === 400) };
    },
  }),
  defineCheck({
    id: 'errors.malformed-json',
    kind: 'observation',
    section: 'Errors',
    rule: 'The status of a body that is not JSON: not shown (400 is "validation failure").',
    emulatorChoice: '400 with the error body',
    scratchTables: ['malformed'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('malformed');
      const res = await ctx.send('createRecords', { params: { tableName: name }, rawBody: '{"records": [' });
      return { observed: `HTTP ${res.status}`, asEmulator: res.status === 400 };
    },
  }),
  defineCheck({
    id: 'errors.body-encodings',
    kind: 'observation',
    section: 'Errors',
    rule: 'Requests are JSON, which is UTF-8 text (RFC 8259). What a records create answers whose body is not UTF-8, is declared in another charset, or is compressed (Content-Encoding: gzip): not shown.',
    emulatorChoice: '400 with the error body, and nothing is created',
    scratchTables: ['encodings'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('encodings', {}, [field('name', 'string')]);
      const latin1 = Buffer.from('{"records":[{"name":"caf\u00e9"}]}', 'latin1');
      const tally = new Tally();
      for (const [label, rawBody, contentType, coding] of [
        ['bytes that are not UTF-8 (Latin-1 é)', latin1, 'application/json'],
        ['charset=iso-8859-1', latin1, 'application/json; charset=iso-8859-1'],
        ['Content-Encoding: gzip', gzipSync('{"records":[{"name":"zipped"}]}'), 'application/json', 'gzip'],
      ] as [string, Buffer, string, string?][]) {
        const headers = { 'content-type': contentType, ...(coding === undefined ? {} : { 'content-encoding': coding }) };
        const res = await ctx.send('createRecords', { params: { tableName: name }, rawBody, headers });
        tally.same(label, `HTTP ${res.status}`, 'HTTP 400');
      }
      const list = await ctx.send('listRecords', { params: { tableName: name } });
      tally.same('records created', expectOk(list).data.map((r) => r.values.name), []);
      return tally.result('bodies in other encodings and codings');
    },
  }),
];

async function statusesOf(ctx: CheckContext, limits: number[]): Promise<[number, number][]> {
  const out: [number, number][] = [];
  for (const limit of limits) out.push([limit, (await ctx.send('listSchemaChanges', { query: { since: '2020-01-01T00:00:00Z', limit } })).status]);
  return out;
}
