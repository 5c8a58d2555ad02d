import type { RecordChange } from '../../api/index.ts';
import { defineCheck, type CheckContext } from '../check.ts';
import { expectEqual, expectError, expectOk, expectTrue } from '../expectations.ts';
import { EPOCH, field } from './fixtures.ts';
import { itemsOf, pollAll, pollStart } from './polling.ts';
import { Tally } from './tally.ts';

/** Record changes: history required, `since` required and inclusive, the polling rules with `asOf`. */

async function historyTable(ctx: CheckContext, purpose: string): Promise<string> {
  return (await ctx.scratch.create(purpose, { hasHistory: true }, [field('name', 'string')])).name;
}

async function create(ctx: CheckContext, tableName: string, names: string[]): Promise<string[]> {
  const res = await ctx.send('createRecords', { params: { tableName }, body: { records: names.map((name) => ({ name })) } });
  return expectOk(res, 'POST records succeeds').data.ids;
}

/** A new history table, a poll opened on it, then records of these names created: the start of most checks here. */
async function createdSincePoll(ctx: CheckContext, purpose: string, names: string[]): Promise<{ table: string; since: string; ids: string[] }> {
  const table = await historyTable(ctx, purpose);
  const since = await pollStart(ctx, 'listRecordChanges', table);
  return { table, since, ids: await create(ctx, table, names) };
}

/** {@link createdSincePoll} with the one record `a`. */
async function oneCreate(ctx: CheckContext, purpose: string): Promise<{ table: string; since: string; id: string }> {
  const { table, since, ids } = await createdSincePoll(ctx, purpose, ['a']);
  return { table, since, id: ids[0]! };
}

export const recordChangeChecks = [
  defineCheck({
    id: 'record-changes.history-required-400',
    section: 'Records: rules (4)',
    rule: 'The record-changes endpoint works only for tables with history enabled; otherwise it answers 400.',
    scratchTables: ['no_history'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('no_history', { hasHistory: false });
      expectError(await ctx.send('listRecordChanges', { params: { tableName: name }, query: { since: EPOCH } }), 400);
    },
  }),
  defineCheck({
    id: 'record-changes.since-required-400',
    section: 'Records',
    rule: 'GET record changes without since answers 400.',
    scratchTables: ['no_since'],
    async run(ctx) {
      const name = await historyTable(ctx, 'no_since');
      expectError(await ctx.send('listRecordChanges', { params: { tableName: name } }), 400);
    },
  }),
  defineCheck({
    id: 'record-changes.query-400-404',
    section: 'Timestamp parameters; Records',
    rule: 'since and asOf are UTC date-times YYYY-MM-DDTHH:MM[:SS[.fraction]]Z with a valid calendar date: anything else answers 400; an unknown table answers 404.',
    scratchTables: ['bad_since'],
    async run(ctx) {
      const tableName = await historyTable(ctx, 'bad_since');
      for (const since of ['2020-01-01', '2020-01-01T00:00:00', '2021-02-29T00:00:00Z', 'yesterday']) {
        expectError(await ctx.send('listRecordChanges', { params: { tableName }, query: { since } }), 400, `since=${since} answers 400`);
      }
      expectError(await ctx.send('listRecordChanges', { params: { tableName }, query: { since: EPOCH, asOf: '2020-13-01T00:00Z' } }), 400, 'asOf in month 13 answers 400');
      expectOk(await ctx.send('listRecordChanges', { params: { tableName }, query: { since: '2024-02-29T00:00Z' } }), 'since on a leap day, without seconds, is accepted');
      expectError(await ctx.send('listRecordChanges', { params: { tableName: ctx.missingName }, query: { since: EPOCH } }), 404, 'an unknown table answers 404');
    },
  }),
  defineCheck({
    id: 'record-changes.lists-changes',
    section: 'Records: rules (4)',
    rule: 'A poll returns the records created, updated or deleted at or after since, with changedAt, and meta.asOf no earlier than any of them; updates have changeType update.',
    scratchTables: ['changes'],
    async run(ctx) {
      const { table, since, ids: [a, b] } = await createdSincePoll(ctx, 'changes', ['a', 'b']);
      expectOk(await ctx.send('updateRecords', { params: { tableName: table }, body: { records: [{ id: a, name: 'a2' }] } }));
      expectOk(await ctx.send('deleteRecords', { params: { tableName: table }, body: { records: [b] } }));
      const pages = await pollAll<RecordChange>(ctx, 'listRecordChanges', since, { tableName: table });
      const changes = itemsOf(pages);
      const last = pages.at(-1)!.exchange;
      expectTrue(changes.some((c) => c.id === a && c.changeType === 'update'), 'the update of a is listed as update', `an update of ${a}`, changes, last);
      expectTrue(changes.filter((c) => c.id === a).length >= 2, 'the create and the update of a are listed', `two changes of ${a}`, changes, last);
      expectTrue(changes.filter((c) => c.id === b).length >= 2, 'the create and the delete of b are listed', `two changes of ${b}`, changes, last);
      const asOf = Date.parse(pages[0]!.page.meta.asOf);
      for (const c of changes) {
        expectTrue(Date.parse(c.changedAt) >= Date.parse(since), 'every change is at or after since', `changedAt >= ${since}`, c, last);
        expectTrue(Date.parse(c.changedAt) <= asOf, 'meta.asOf is no earlier than the changes', `changedAt <= ${pages[0]!.page.meta.asOf}`, c, last);
      }
    },
  }),
  defineCheck({
    id: 'record-changes.failed-requests-log-nothing',
    section: 'What the service does; Records: rules (1, 2)',
    rule: 'A create, update or delete that fails changes nothing, so it adds no record change: the poll after them equals the poll before.',
    scratchTables: ['failed_log'],
    async run(ctx) {
      const { table, since, id: a } = await oneCreate(ctx, 'failed_log');
      const params = { tableName: table };
      const before = itemsOf(await pollAll<RecordChange>(ctx, 'listRecordChanges', since, { tableName: table }));
      const missing = await create(ctx, table, ['gone']);
      expectOk(await ctx.send('deleteRecords', { params, body: { records: missing } }));
      const afterSetUp = itemsOf(await pollAll<RecordChange>(ctx, 'listRecordChanges', since, { tableName: table }));
      expectError(await ctx.send('updateRecords', { params, body: { records: [{ id: a, name: 'x' }, { id: a, name: 5 }] } }), 400, 'an update with an invalid value answers 400');
      expectError(await ctx.send('createRecords', { params, body: { records: [{ name: 'ok' }, { name: 1 }] } }), 400, 'a create with an invalid value answers 400');
      expectError(await ctx.send('deleteRecords', { params, body: { records: [a, missing[0]!] } }), 404, 'a delete naming a missing record answers 404');
      const after = itemsOf(await pollAll<RecordChange>(ctx, 'listRecordChanges', since, { tableName: table }));
      expectEqual(after, afterSetUp, 'the failed requests logged no record change');
      expectTrue(before.some((c) => c.id === a), 'the successful create was logged', `a change of ${a}`, before);
    },
  }),
  defineCheck({
    id: 'record-changes.since-inclusive',
    section: 'Records: rules (4)',
    rule: 'since is inclusive: a poll from the changedAt of a change lists that change.',
    scratchTables: ['inclusive'],
    async run(ctx) {
      const { table, since, id: a } = await oneCreate(ctx, 'inclusive');
      const change = itemsOf(await pollAll<RecordChange>(ctx, 'listRecordChanges', since, { tableName: table })).find((c) => c.id === a);
      expectTrue(change !== undefined, 'the create is listed', `a change of ${a}`, 'none');
      const again = await pollAll<RecordChange>(ctx, 'listRecordChanges', change!.changedAt, { tableName: table });
      expectTrue(itemsOf(again).some((c) => c.id === a), `a poll from its changedAt (${change!.changedAt}) lists it`, `a change of ${a}`, itemsOf(again), again.at(-1)!.exchange);
    },
  }),
  defineCheck({
    id: 'record-changes.paging-as-of',
    section: 'Workspace: polling rules (2)',
    rule: "Paging one poll: later pages pass the first page's meta.asOf as asOf; has_more is true until the last page; the pages hold each change once; a change made between pages is not in them and shows in the next poll (since = that asOf).",
    scratchTables: ['paged_changes'],
    async run(ctx) {
      const { table, since, ids } = await createdSincePoll(ctx, 'paged_changes', ['r1', 'r2', 'r3', 'r4', 'r5']);
      const params = { tableName: table };
      const first = await ctx.send('listRecordChanges', { params, query: { since, limit: 2 } });
      const page1 = expectOk(first);
      expectEqual(page1.page_info, { has_more: true, limit: 2, offset: 0 }, 'page_info of the first page', first);
      const asOf = page1.meta.asOf;
      const [extra] = await create(ctx, table, ['between pages']);
      const seen = page1.data.map((c) => c.id);
      for (const [offset, hasMore] of [[2, true], [4, false]] as const) {
        const res = await ctx.send('listRecordChanges', { params, query: { since, asOf, limit: 2, offset } });
        const page = expectOk(res);
        expectEqual(page.page_info, { has_more: hasMore, limit: 2, offset }, `page_info at offset ${offset} with asOf`, res);
        seen.push(...page.data.map((c) => c.id));
      }
      expectEqual([...seen].sort(), [...ids].sort(), 'the pages of the poll hold each created record once, and not the one created between pages');
      const next = itemsOf(await pollAll<RecordChange>(ctx, 'listRecordChanges', asOf, { tableName: table }));
      expectTrue(next.some((c) => c.id === extra), 'the next poll (since = asOf) lists the record created between pages', `a change of ${extra}`, next);
    },
  }),
  defineCheck({
    id: 'record-changes.entries',
    kind: 'observation',
    section: 'Records: rules (4); Resources: record change',
    rule: 'Whether a poll lists one entry per change or one per record, in which order, the form of changedAt, and the default page size: not shown.',
    emulatorChoice: 'one entry per change, in time order; changedAt and meta.asOf with milliseconds (YYYY-MM-DDTHH:MM:SS.sssZ); 100 per page without limit',
    scratchTables: ['entries'],
    async run(ctx) {
      const { table, since, ids: [a, b] } = await createdSincePoll(ctx, 'entries', ['a', 'b']);
      const params = { tableName: table };
      expectOk(await ctx.send('updateRecords', { params, body: { records: [{ id: a, name: 'a2' }] } }));
      expectOk(await ctx.send('updateRecords', { params, body: { records: [{ id: a, name: 'a3' }] } }));
      expectOk(await ctx.send('deleteRecords', { params, body: { records: [b] } }));
      const res = await ctx.send('listRecordChanges', { params, query: { since } });
      const page = expectOk(res, 'a poll without limit succeeds');
      const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
      const times = page.data.map((c) => Date.parse(c.changedAt));
      const tally = new Tally();
      tally.same('the entries', page.data.map((c) => [c.id, c.changeType]), [[a, 'create'], [b, 'create'], [a, 'update'], [a, 'update'], [b, 'delete']]);
      tally.same('in time order', times.every((t, i) => i === 0 || t >= times[i - 1]!), true);
      tally.same('changedAt with milliseconds', page.data.every((c) => ISO_MS.test(c.changedAt)), true);
      tally.same('meta.asOf with milliseconds', ISO_MS.test(page.meta.asOf), true);
      tally.same('page_info without limit', page.page_info, { has_more: false, limit: 100, offset: 0 });
      return tally.result('a poll of two creates, two updates and a delete');
    },
  }),
  defineCheck({
    id: 'record-changes.change-types',
    kind: 'observation',
    section: 'Resources: record change',
    rule: 'changeType values other than update: not shown. What a create and a delete are called.',
    emulatorChoice: 'create and delete',
    scratchTables: ['change_types'],
    async run(ctx) {
      const { table, since, id: a } = await oneCreate(ctx, 'change_types');
      expectOk(await ctx.send('deleteRecords', { params: { tableName: table }, body: { records: [a] } }));
      const types = itemsOf(await pollAll<RecordChange>(ctx, 'listRecordChanges', since, { tableName: table }))
        .filter((c) => c.id === a).map((c) => c.changeType);
      return { observed: `create, then delete: ${types.join(', ')}`, asEmulator: types.join() === 'create,delete' };
    },
  }),
];
