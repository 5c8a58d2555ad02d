import { defineCheck } from '../check.ts';
import { expectEqual, expectOk } from '../expectations.ts';
import { field } from './fixtures.ts';

/** Fields: the paged list of a table's fields. */

export const fieldListChecks = [
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
];
