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
  try {
    const first = await fetch({ sort: 'id', limit: MAX_PAGE_LIMIT, offset: 0 }, signal);
    if (!first.page_info.has_more) return first.data.length;
  } catch (error) {
    if (!isRefusedPage(error) || signal?.aborted === true) throw error;
    if (!await holdsRecordAt(fetch, 0, signal)) return 0;
    return countBetween(fetch, signal, 0, 1);
  }
  return countBetween(fetch, signal, MAX_PAGE_LIMIT, 2 * MAX_PAGE_LIMIT);
}

/**
 * The same estimate for a table of more than a page, or null for one that fits in a page, told
 * by one request of one record: what a backfill needs, which reads such a table whole with its
 * first request. Its records are not read twice, nor is a page of large ones held twice.
 */
export async function estimateRecordCountPastOnePage(fetch: RecordPageFetcher, signal?: AbortSignal): Promise<number | null> {
  if (!(await holdsRecordAt(fetch, MAX_PAGE_LIMIT, signal))) return null;
  return countBetween(fetch, signal, MAX_PAGE_LIMIT, 2 * MAX_PAGE_LIMIT);
}

async function holdsRecordAt(fetch: RecordPageFetcher, offset: number, signal: AbortSignal | undefined): Promise<boolean> {
  return (await fetch({ sort: 'id', limit: 1, offset }, signal)).data.length > 0;
}

/** The estimate of a table known to hold a record at offset `low`, probing from `high` on. */
async function countBetween(fetch: RecordPageFetcher, signal: AbortSignal | undefined, low: number, high: number): Promise<number> {
  const holds = (offset: number) => holdsRecordAt(fetch, offset, signal);
  // `low` holds a record, `high` is past the end.
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
