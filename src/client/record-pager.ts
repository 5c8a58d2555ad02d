import type { PageInfo } from '../api/common.ts';
import { recordIdToNumber, type RecordIdInput } from '../api/identifiers.ts';
import { MAX_PAGE_LIMIT } from '../api/paging.ts';
import type { ApiRecord, RecordFilter } from '../api/records.ts';
import { InvalidResponseError, type UpstreamCall } from '../errors.ts';
import { ConcurrencyLimit } from './concurrency-limit.ts';

/** Query of the records list endpoint, in client terms (the client encodes `fields` and `filter`). */
export interface RecordListParams {
  fields?: string[];
  filter?: RecordFilter;
  /** Field name or `id`; `-name` sorts descending. */
  sort?: string;
  limit?: number;
  offset?: number;
}

export interface RecordPage {
  data: ApiRecord[];
  page_info: PageInfo;
}

export type RecordPageFetcher = (query: RecordListParams, signal: AbortSignal | undefined) => Promise<RecordPage>;

/** Field names every record of an answer must carry (see `checkRecordFields`). */
interface ExpectFieldsOption {
  /**
   * Field names every record must hold a value for, `null` included: a record without one of
   * them fails the read (missing is not null). Default: `fields`, when given.
   */
  expectFields?: readonly string[];
}

export interface IterateRecordsOptions extends ExpectFieldsOption {
  fields?: string[];
  filter?: RecordFilter;
  /** Default `id`: offset paging is only stable over a total order. */
  sort?: string;
  /** Records per request, 1 to 100. Default 100. */
  pageSize?: number;
  /** Pages fetched ahead at once, and the most pages held. Default 4. */
  concurrency?: number;
  signal?: AbortSignal;
}

export interface RecordsByIdsOptions extends ExpectFieldsOption {
  fields?: string[];
  signal?: AbortSignal;
}

/**
 * Refuses a page where a record lacks one of the expected field keys. A missing key is no null:
 * writing it as one would erase a value the upstream did not send.
 */
function checkRecordFields(records: readonly ApiRecord[], expected: readonly string[], call: UpstreamCall): void {
  for (const record of records) {
    for (const name of expected) {
      // Own keys only: `constructor` is a field name too, and every object inherits one.
      if (!Object.hasOwn(record.values, name)) {
        throw new InvalidResponseError(call, 'schema', `record ${record.id} has no value for field ${JSON.stringify(name)}`);
      }
    }
  }
}

function checkPageSize(pageSize: number): void {
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_LIMIT) {
    throw new RangeError(`pageSize must be an integer from 1 to ${MAX_PAGE_LIMIT}, got ${pageSize}`);
  }
}

/**
 * Pages through a table by offset, up to `concurrency` pages in flight, handing pages out
 * strictly in order. The first request goes alone (most tables fit in one page); once a page
 * says `has_more`, the window fills up to `concurrency`. Stopping early aborts what is in flight.
 */
export async function* iterateRecordPages(
  fetch: RecordPageFetcher, options: IterateRecordsOptions, call: UpstreamCall,
): AsyncGenerator<ApiRecord[], void, undefined> {
  const pageSize = options.pageSize ?? MAX_PAGE_LIMIT;
  const concurrency = options.concurrency ?? 4;
  checkPageSize(pageSize);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  }
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  const base: RecordListParams = { sort: options.sort ?? 'id', limit: pageSize };
  if (options.fields) base.fields = options.fields;
  const expected = options.expectFields ?? options.fields ?? [];
  if (options.filter) base.filter = options.filter;

  const window: Array<Promise<RecordPage>> = [];
  let nextOffset = 0;
  const launch = () => {
    const page = fetch({ ...base, offset: nextOffset }, signal);
    // Pages dropped after an early stop or a failure must not surface as unhandled rejections.
    page.catch(() => undefined);
    window.push(page);
    nextOffset += pageSize;
  };

  try {
    launch();
    for (let offset = 0; ; offset += pageSize) {
      const page = await window.shift()!;
      checkRecordFields(page.data, expected, call);
      const more = page.page_info.has_more;
      if (more && page.data.length < pageSize) {
        // Fixed-stride offsets would skip records.
        throw new InvalidResponseError(call, 'paging',
          `page at offset ${offset} holds ${page.data.length} of ${pageSize} records but has_more is true`);
      }
      if (!more) {
        if (page.data.length > 0) yield page.data;
        return;
      }
      while (window.length < concurrency) launch();
      yield page.data;
    }
  } finally {
    stop.abort(new Error('record paging stopped'));
  }
}

const IDS_PER_REQUEST = MAX_PAGE_LIMIT;
const ID_CHUNKS_IN_FLIGHT = 4;

/**
 * Reads records back by id through the list endpoint (`filter={"id":[…]}`, at most 100 ids per
 * request). Ids that no longer exist are simply absent from the result; duplicates are read once.
 */
export async function readRecordsByIds(
  fetch: RecordPageFetcher, ids: readonly RecordIdInput[], options: RecordsByIdsOptions, call: UpstreamCall,
): Promise<ApiRecord[]> {
  const unique = [...new Set(ids.map((id) => {
    const n = recordIdToNumber(id);
    if (!Number.isSafeInteger(n) || n <= 0) throw new RangeError(`record id must be a positive integer, got ${JSON.stringify(id)}`);
    return n;
  }))];
  const chunks: number[][] = [];
  for (let i = 0; i < unique.length; i += IDS_PER_REQUEST) chunks.push(unique.slice(i, i + IDS_PER_REQUEST));
  const limit = new ConcurrencyLimit(ID_CHUNKS_IN_FLIGHT);
  const results = await Promise.all(chunks.map((chunk) => limit.run(async () => {
    const query: RecordListParams = { filter: { id: chunk }, sort: 'id', limit: chunk.length, offset: 0 };
    if (options.fields) query.fields = options.fields;
    const page = await fetch(query, options.signal);
    if (page.page_info.has_more || page.data.length > chunk.length) {
      throw new InvalidResponseError(call, 'paging', `a filter on ${chunk.length} ids returned more records`);
    }
    checkRecordFields(page.data, options.expectFields ?? options.fields ?? [], call);
    return page.data;
  }, options.signal)));
  return results.flat();
}
