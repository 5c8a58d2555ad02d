import { MAX_PAGE_LIMIT } from '../api/paging.ts';
import type { RecordPageFetcher } from './record-pager.ts';
import { isRefusedPage } from './refused-page.ts';

/** How close the estimate of a large table gets: within this share of its size… */
const PRECISION = 0.01;
/** …and exact below this many records. */
const EXACT_BELOW = 10_000;

/**
 * About how many records a table holds, for progress bars, `wsmirror status` and `wsmirror
 * check`: the list endpoint tells no total, so this probes offsets with one-record pages — a
 * first page of 100, then doubling offsets until one is past the end, then halving the gap until
 * it is under 1 % of the size. About 2·log2(n/100) + 7 small requests; exact up to 10,000 records.
 * When upstream refuses the first page as too much at once (`isRefusedPage`: records costly to
 * list), the probes start from the first record instead. Records created or deleted meanwhile
 * make it an estimate, never a promise.
 */
export async function estimateRecordCount(fetch: RecordPageFetcher, signal?: AbortSignal): Promise<number> {
  const holds = async (offset: number) => (await fetch({ sort: 'id', limit: 1, offset }, signal)).data.length > 0;
  // `low` holds a record, `high` is past the end.
  let low = MAX_PAGE_LIMIT;
  let high = 2 * MAX_PAGE_LIMIT;
  try {
    const first = await fetch({ sort: 'id', limit: MAX_PAGE_LIMIT, offset: 0 }, signal);
    if (!first.page_info.has_more) return first.data.length;
  } catch (error) {
    if (!isRefusedPage(error) || signal?.aborted === true) throw error;
    if (!await holds(0)) return 0;
    low = 0;
    high = 1;
  }
  while (await holds(high)) {
    low = high;
    high *= 2;
  }
  while (high - low > (low < EXACT_BELOW ? 1 : Math.floor(low * PRECISION))) {
    const middle = Math.floor((low + high) / 2);
    if (await holds(middle)) low = middle;
    else high = middle;
  }
  return low + 1;
}
