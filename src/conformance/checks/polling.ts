import type { ChangesPage } from '../../api/index.ts';
import type { CheckContext } from '../check.ts';
import { expectOk, expectTrue } from '../expectations.ts';
import type { Exchange } from '../probe.ts';
import { EPOCH } from './fixtures.ts';

/**
 * The polling rules shared by schema changes and record changes: a poll pages with
 * limit/offset, every later page passing the first page's `meta.asOf` as `asOf`.
 */
export type ChangesEndpoint = 'listSchemaChanges' | 'listRecordChanges';

export interface PollPage<T> {
  page: ChangesPage<T>;
  exchange: Exchange;
}

// Bounds a poll against a busy workspace: the suite reads its own few changes, not history.
const MAX_PAGES = 50;

/** `meta.asOf` of a one-item poll: the moment to poll from to see only what comes next. */
export async function pollStart(ctx: CheckContext, endpoint: ChangesEndpoint, tableName?: string): Promise<string> {
  const params: Record<string, string> = tableName === undefined ? {} : { tableName };
  const res = await ctx.send(endpoint, { params, query: { since: EPOCH, limit: 1 } });
  return expectOk(res, 'a poll from 1970 succeeds').meta.asOf;
}

/** One whole poll from `since`, by the polling rules; returns every page. */
export async function pollAll<T = unknown>(
  ctx: CheckContext, endpoint: ChangesEndpoint, since: string, options: { tableName?: string; limit?: number } = {},
): Promise<PollPage<T>[]> {
  const params: Record<string, string> = options.tableName === undefined ? {} : { tableName: options.tableName };
  const limit = options.limit ?? 100;
  const pages: PollPage<T>[] = [];
  let asOf: string | undefined;
  for (let offset = 0; pages.length < MAX_PAGES; offset += limit) {
    const exchange = await ctx.send(endpoint, { params, query: { since, asOf, limit, offset } });
    const page = expectOk(exchange, 'a changes poll succeeds') as ChangesPage<T>;
    pages.push({ page, exchange });
    expectTrue(page.page_info.limit === limit && page.page_info.offset === offset, 'page_info echoes limit and offset',
      `limit ${limit}, offset ${offset}`, page.page_info, exchange);
    asOf ??= page.meta.asOf;
    if (!page.page_info.has_more) return pages;
  }
  return pages;
}

export function itemsOf<T>(pages: readonly PollPage<T>[]): T[] {
  return pages.flatMap((p) => p.page.data);
}
