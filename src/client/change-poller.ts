import type { ChangesPage } from '../api/changes.ts';
import { MAX_PAGE_LIMIT } from '../api/paging.ts';
import { InvalidResponseError, type UpstreamCall } from '../errors.ts';

export interface PollOptions {
  /** Changes at or after this time: the previous poll's `asOf` (minus the caller's lookback). */
  since: string;
  /**
   * The end of the window, when the caller already has one (a probe's `meta.asOf`); by default
   * the first page's `meta.asOf`.
   */
  asOf?: string;
  /** Items per page, 1 to 100. Default 100. */
  pageSize?: number;
  signal?: AbortSignal;
}

export interface ChangesQuery {
  since: string;
  asOf?: string;
  limit: number;
  offset: number;
}

export type ChangesPageFetcher<T> = (query: ChangesQuery, signal: AbortSignal | undefined) => Promise<ChangesPage<T>>;

/**
 * One poll of a changes endpoint (schema changes and record changes page identically), as an
 * async iterable of pages — one array per response, the first one even when empty.
 *
 * The first page goes without `asOf`; every later page passes the first page's `meta.asOf`, so
 * the poll reads one consistent window; `offset` advances by the items received; the poll ends
 * when `has_more` is false. `asOf` is the value to commit as the next poll's `since` once every
 * page is applied. Only the page being handed out is held. A poll is iterated once.
 */
export class ChangePoll<T> implements AsyncIterable<T[]> {
  readonly #fetch: ChangesPageFetcher<T>;
  readonly #since: string;
  readonly #pageSize: number;
  readonly #signal: AbortSignal | undefined;
  readonly #call: UpstreamCall;
  #asOf: string | undefined;
  #started = false;
  #done = false;

  constructor(fetch: ChangesPageFetcher<T>, options: PollOptions, call: UpstreamCall) {
    const pageSize = options.pageSize ?? MAX_PAGE_LIMIT;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_LIMIT) {
      throw new RangeError(`pageSize must be an integer from 1 to ${MAX_PAGE_LIMIT}, got ${pageSize}`);
    }
    this.#fetch = fetch;
    this.#since = options.since;
    this.#asOf = options.asOf;
    this.#pageSize = pageSize;
    this.#signal = options.signal;
    this.#call = call;
  }

  /** The first page's `meta.asOf`; undefined until the first page arrived. */
  get asOf(): string | undefined {
    return this.#asOf;
  }

  /** True once the last page (`has_more` false) has been handed out. */
  get done(): boolean {
    return this.#done;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T[], void, undefined> {
    if (this.#started) throw new Error('a change poll can be iterated only once; start a new poll');
    this.#started = true;
    let offset = 0;
    /** The last page's items, to tell a page that repeats it (an upstream ignoring `offset`). */
    let previous: { offset: number; key: string } | undefined;
    for (;;) {
      const query: ChangesQuery = { since: this.#since, limit: this.#pageSize, offset };
      if (this.#asOf !== undefined) query.asOf = this.#asOf;
      const page = await this.#fetch(query, this.#signal);
      this.#asOf ??= page.meta.asOf;
      const more = page.page_info.has_more;
      if (more && page.data.length === 0) {
        // Offset would not move: the same page forever.
        throw new InvalidResponseError(this.#call, 'paging', `page at offset ${offset} is empty but has_more is true`);
      }
      // In one window (`asOf` fixed) every page holds other changes: the same one again, or an
      // answer for another offset, means upstream ignores `offset`, and the poll would not end.
      if (page.page_info.offset !== offset) {
        throw new InvalidResponseError(this.#call, 'paging', `asked for offset ${offset}, the page says offset ${page.page_info.offset}`);
      }
      const key = JSON.stringify(page.data);
      if (previous !== undefined && page.data.length > 0 && key === previous.key) {
        throw new InvalidResponseError(this.#call, 'paging', `page at offset ${offset} repeats the page at offset ${previous.offset}`);
      }
      previous = { offset, key };
      offset += page.data.length;
      if (!more) this.#done = true;
      yield page.data;
      if (!more) return;
    }
  }
}
