import type { PageInfo } from '../api/common.ts';
import { MAX_PAGE_LIMIT } from '../api/paging.ts';
import type { ApiRecord, RecordFilter } from '../api/records.ts';
import { InvalidResponseError, RecordsRefusedError, type UpstreamCall } from '../errors.ts';
import { checkFieldsOf, type ExpectFieldsOption } from './record-fields.ts';
import { isRefusedPage } from './refused-page.ts';

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

/** A page as a fetcher answers it, with the size of its answer when the fetcher knows it. */
export interface FetchedPage extends RecordPage {
  /** Bytes of the answer's body. */
  bodyBytes?: number;
}

export type RecordPageFetcher = (query: RecordListParams, signal: AbortSignal | undefined) => Promise<FetchedPage>;

/**
 * Where a read of a table stands: the last record handed out and its offset when it was read.
 * A read started from one goes on after that record (see `iterateRecordPages`).
 */
export interface RecordPosition {
  /** Offset of the record `lastId` in the id-sorted list when it was read. */
  offset: number;
  lastId: number;
}

/** A page of records handed out by a table read, with the position after its last record. */
export type RecordRun = ApiRecord[] & { readonly position: RecordPosition };

export interface IterateRecordsOptions extends ExpectFieldsOption {
  /** Go on from an earlier read's position instead of the start (a backfill resumed after a crash). */
  from?: RecordPosition;
  fields?: string[];
  filter?: RecordFilter;
  /** New records per request, 1 to 100 (each request asks for one more, see `iterateRecordPages`). Default 100. */
  pageSize?: number;
  /** Pages fetched ahead at once, and the most pages held. Default 4. */
  concurrency?: number;
  /**
   * Fewer pages are fetched ahead when pages are large: as many as the last one's answer fits in
   * this many bytes, one at least. Default 16 MiB (DEFAULT_BYTES_IN_FLIGHT).
   */
  bytesInFlight?: number;
  signal?: AbortSignal;
}

/**
 * The ids of a list page as numbers, checked in the same pass to ascend and each record to hold
 * every expected field.
 */
function checkedIds(records: readonly ApiRecord[], expected: readonly string[], offset: number, call: UpstreamCall): number[] {
  const ids = new Array<number>(records.length);
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    const id = Number(record.id);
    if (i > 0 && id <= ids[i - 1]!) {
      throw new InvalidResponseError(call, 'paging',
        `page at offset ${offset} is not sorted by id: record ${record.id} follows record ${records[i - 1]!.id}`);
    }
    ids[i] = id;
    checkFieldsOf(record, expected, call);
  }
  return ids;
}

const FIRST_RECORD = 'the first record (offset 0)';

/** Accepted pages in a row after which a page size lowered by a refusal doubles again (up to `pageSize`). */
export const PAGES_BEFORE_GROWING = 4;

function checkPageSize(pageSize: number): void {
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_LIMIT) {
    throw new RangeError(`pageSize must be an integer from 1 to ${MAX_PAGE_LIMIT}, got ${pageSize}`);
  }
}

/**
 * Pages in a row that may bring no record not read before (records moving under the reader, or
 * an upstream that ignores `offset`) before the read fails instead of going on for ever. Each
 * one is a step back over up to 99 records deleted meanwhile, so an honest upstream only gets
 * here when about 100,000 records are deleted below the reader's position at once.
 */
const MAX_PAGES_WITHOUT_NEW_RECORDS = 1000;

/**
 * Answers in flight, by the size of the last page's answer. A page of large records (up to the
 * client's maxResponseBytes, 32 MiB by default) is held as its body, its text and its parsed
 * records; four of them in flight took a first sync past 400 MB. Pages of ordinary records (tens
 * or hundreds of KB) keep the whole window.
 */
export const DEFAULT_BYTES_IN_FLIGHT = 16 * 1024 * 1024;

/**
 * Pages through a table by offset in id order, handing out every record once and in ascending
 * id order, up to `concurrency` pages in flight. The first request goes alone (most tables fit in
 * one page); once a page says `has_more`, the window fills up to `concurrency`, or to fewer pages
 * when the last one's answer was large (`bytesInFlight`). Stopping early aborts what is in flight.
 *
 * Offsets move when upstream inserts or deletes records below them while the table is read, so
 * consecutive pages overlap by one record: a page that starts at or before the last id handed
 * out continues the read without a gap (ids it repeats are dropped); one that starts after it
 * may have skipped records deleted below its offset meanwhile, so the read steps back a page
 * and carries on from there. Every record that exists from the start to the end of the read is
 * handed out; records created, changed or deleted meanwhile are the caller's change feed's (or
 * next scan's) business.
 *
 * A page upstream refuses (`isRefusedPage`) is asked again at the same offset with half as many
 * new records, down to one; pages asked for after it are abandoned and asked again at that size.
 * After `PAGES_BEFORE_GROWING` accepted pages the size doubles again, up to `pageSize`, so a run
 * of costly records slows the read only while it lasts. Each page still starts at the last record
 * of the page before, whatever their sizes, so the overlap check holds as it is. Where a page of
 * one new record (two records, with the overlap) is refused too, it is read as two requests of
 * one record: the new record first, then the record before it, which must be the last one handed
 * out (or an earlier one), as the overlap of one request would be. Records deleted below meanwhile
 * only move later records down, into that position, so a record skipped before the first request
 * still shows after the second, and the read steps back (this assumes, as the pager does anyway,
 * that new records take ids above the existing ones). A record refused even alone ends the read
 * with `RecordsRefusedError`, naming it.
 *
 * Each page carries the position after its last record; a read started `from` such a position
 * asks first at its offset, so its first page starts with that record again (the usual overlap),
 * or steps back as above when records were deleted below it since.
 */
export async function* iterateRecordPages(
  fetch: RecordPageFetcher, options: IterateRecordsOptions, call: UpstreamCall,
): AsyncGenerator<RecordRun, void, undefined> {
  const pageSize = options.pageSize ?? MAX_PAGE_LIMIT;
  const concurrency = options.concurrency ?? 4;
  const bytesInFlight = options.bytesInFlight ?? DEFAULT_BYTES_IN_FLIGHT;
  checkPageSize(pageSize);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  }
  // New records per page at most; each request asks for one more, the overlap.
  const fullStride = Math.min(pageSize, MAX_PAGE_LIMIT - 1);
  /** New records per page now: lowered by refused pages, grown back by accepted ones. */
  let stride = fullStride;
  /** Pages of one new record read as two requests of one record (`readApart`). */
  let apart = false;
  let acceptedSinceLowered = 0;
  const base: RecordListParams = { sort: 'id' };
  if (options.fields) base.fields = options.fields;
  if (options.filter) base.filter = options.filter;
  const expected = options.expectFields ?? options.fields ?? [];

  let lastId = options.from?.lastId ?? -1;
  let pagesWithoutNew = 0;
  const noProgress = (offset: number) => {
    if (++pagesWithoutNew >= MAX_PAGES_WITHOUT_NEW_RECORDS) {
      throw new InvalidResponseError(call, 'paging', `${pagesWithoutNew} pages in a row (the last at offset ${offset}) ` +
        `brought no record not read before: the table keeps moving, or the upstream ignores offset`);
    }
  };

  /** The record at `offset` alone; refused, the read can go no lower, and says which record (`name`). */
  const readAlone = async (offset: number, signal: AbortSignal, name: () => Promise<string>): Promise<RecordPage> => {
    try {
      return await fetch({ ...base, limit: 1, offset }, signal);
    } catch (error) {
      if (!isRefusedPage(error)) throw error;
      throw new RecordsRefusedError(error, await name());
    }
  };
  /** The record at `offset`, after the last one handed out: named by that one, or else by the record before it. */
  const nameNew = async (offset: number, signal: AbortSignal): Promise<string> => {
    if (offset === 0) return FIRST_RECORD;
    let before = lastId >= 0 ? String(lastId) : undefined;
    // Nothing handed out yet: the record before it names the place, if upstream lists it.
    before ??= (await fetch({ ...base, limit: 1, offset: offset - 1 }, signal).catch(() => undefined))?.data[0]?.id;
    return before === undefined ? `the record at offset ${offset}` : `the record after record ${before} (offset ${offset})`;
  };
  /**
   * The page of records `offset` and `offset + 1`, as two requests: the new record first, then
   * the one before it (see above). Read again when a record deleted between the two moved the
   * second into the first's place.
   */
  const readApart = async (offset: number, signal: AbortSignal): Promise<RecordPage> => {
    for (;;) {
      const next = await readAlone(offset + 1, signal, () => nameNew(offset + 1, signal));
      const before = await readAlone(offset, signal, async () => (offset === 0 ? FIRST_RECORD : `the record at offset ${offset}`));
      const [first, second] = [before.data[0], next.data[0]];
      if (first === undefined || second === undefined || Number(first.id) < Number(second.id)) {
        const data = [...before.data, ...next.data];
        return { data, page_info: { has_more: data.length === 2 && next.page_info.has_more, limit: 2, offset } };
      }
      noProgress(offset);
    }
  };

  // Pages in flight belong to one run of offsets; stepping back or a refused page abandons them,
  // and so does the caller's signal or the end of the read. One controller per run, not a signal
  // combined per page (AbortSignal.any registers each with the long-lived signals it follows).
  let run = new AbortController();
  const abortRun = () => run.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', abortRun, { once: true });
  if (options.signal?.aborted) abortRun();
  let window: Array<{ offset: number; stride: number; page: Promise<FetchedPage> }> = [];
  let nextOffset = options.from?.offset ?? 0;
  const launch = () => {
    const offset = nextOffset;
    const page = apart ? readApart(offset, run.signal) : fetch({ ...base, limit: stride + 1, offset }, run.signal);
    // Pages dropped after an early stop, a step back or a failure must not surface as unhandled rejections.
    page.catch(() => undefined);
    window.push({ offset, stride, page });
    nextOffset += stride;
  };
  const restartAt = (offset: number) => {
    run.abort(new Error('record paging stepped back'));
    run = new AbortController();
    if (options.signal?.aborted) abortRun();
    window = [];
    nextOffset = offset;
    launch();
  };

  try {
    launch();
    for (;;) {
      const { offset, stride: pageStride, page: pending } = window.shift()!;
      const limit = pageStride + 1;
      let page: FetchedPage;
      try {
        page = await pending;
      } catch (error) {
        if (!isRefusedPage(error) || options.signal?.aborted) throw error;
        // Too much for upstream at once: the same offset with fewer records, and apart at one.
        if (pageStride > 1) stride = Math.floor(pageStride / 2);
        else apart = true;
        acceptedSinceLowered = 0;
        options.onRefusedPage?.({ asked: limit, next: apart ? 1 : stride + 1, offset, message: error.upstreamMessage });
        restartAt(offset);
        continue;
      }
      const ids = checkedIds(page.data, expected, offset, call);
      const more = page.page_info.has_more;
      if (more && page.data.length < limit) {
        // Fixed-stride offsets would skip records.
        throw new InvalidResponseError(call, 'paging',
          `page at offset ${offset} holds ${page.data.length} of ${limit} records but has_more is true`);
      }
      if (offset > 0 && !(ids.length > 0 && ids[0]! <= lastId)) {
        // Records deleted below this offset since the last page may have moved others past it.
        noProgress(offset);
        restartAt(Math.max(0, offset - pageStride));
        continue;
      }
      const first = ids.findIndex((id) => id > lastId);
      const fresh = Object.assign(first < 0 ? [] : page.data.slice(first), {
        position: { offset: offset + ids.length - 1, lastId: Math.max(lastId, ids[ids.length - 1] ?? -1) },
      });
      if (fresh.length > 0) {
        lastId = ids[ids.length - 1]!;
        pagesWithoutNew = 0;
      } else if (more) {
        noProgress(offset);
      }
      if (!more) {
        if (fresh.length > 0) yield fresh;
        return;
      }
      if ((apart || stride < fullStride) && ++acceptedSinceLowered >= PAGES_BEFORE_GROWING) {
        if (apart) apart = false;
        else stride = Math.min(fullStride, stride * 2);
        acceptedSinceLowered = 0;
      }
      const fits = page.bodyBytes ? Math.max(1, Math.floor(bytesInFlight / page.bodyBytes)) : concurrency;
      while (window.length < Math.min(concurrency, fits)) launch();
      if (fresh.length > 0) yield fresh;
    }
  } finally {
    options.signal?.removeEventListener('abort', abortRun);
    run.abort(new Error('record paging stopped'));
  }
}
