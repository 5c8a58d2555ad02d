import { defineCheck } from '../check.ts';
import { expectOk } from '../expectations.ts';
import { field } from './fixtures.ts';

const EMULATOR_STATUSES = 'GET workspace 200, POST table 201, GET tables 200, GET table 200, PATCH table 200, '
  + 'POST records 201, GET records 200, PATCH records 200, DELETE records 200, DELETE table 200';

/** Success statuses the description leaves open, observed on one round of each endpoint. */
export const statusChecks = [
  defineCheck({
    id: 'statuses.success',
    kind: 'observation',
    section: 'Endpoints',
    rule: 'Success status codes of the workspace, table and record endpoints: not shown.',
    emulatorChoice: EMULATOR_STATUSES,
    scratchTables: ['statuses'],
    async run(ctx) {
      const name = ctx.scratch.name('statuses');
      const seen: string[] = [];
      const note = (what: string, status: number) => seen.push(`${what} ${status}`);
      note('GET workspace', (await ctx.send('getWorkspace')).status);
      const created = await ctx.send('createTable', { body: { name } });
      note('POST table', created.status);
      expectOk(created);
      ctx.scratch.adopt(name);
      expectOk(await ctx.send('createFields', { params: { tableName: name }, body: [field('title', 'string')] }));
      note('GET tables', (await ctx.send('listTables')).status);
      const params = { tableName: name };
      note('GET table', (await ctx.send('getTable', { params })).status);
      note('PATCH table', (await ctx.send('updateTable', { params, body: { isHidden: true } })).status);
      const records = await ctx.send('createRecords', { params, body: { records: [{ title: 'a' }] } });
      note('POST records', records.status);
      const [id] = expectOk(records).data.ids;
      note('GET records', (await ctx.send('listRecords', { params })).status);
      note('PATCH records', (await ctx.send('updateRecords', { params, body: { records: [{ id, title: 'b' }] } })).status);
      note('DELETE records', (await ctx.send('deleteRecords', { params, body: { records: [id] } })).status);
      note('DELETE table', (await ctx.send('deleteTable', { params })).status);
      const observed = seen.join(', ');
      return { observed, asEmulator: observed === EMULATOR_STATUSES };
    },
  }),
];
