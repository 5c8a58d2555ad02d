import { recordIdToNumber, type RecordIdInput } from '../api/identifiers.ts';
import { MAX_PAGE_LIMIT } from '../api/paging.ts';
import type { ApiRecord } from '../api/records.ts';
import { InvalidResponseError, RecordsRefusedError, type UpstreamCall } from '../errors.ts';
import { ConcurrencyLimit } from './concurrency-limit.ts';
import { checkRecordFields, type ExpectFieldsOption } from './record-fields.ts';
import type { RecordListParams, RecordPage, RecordPageFetcher } from './record-pager.ts';
import { isRefusedPage } from './refused-page.ts';

export interface RecordsByIdsOptions extends ExpectFieldsOption {
  fields?: string[];
  signal?: AbortSignal;
}

const IDS_PER_REQUEST = MAX_PAGE_LIMIT;
const ID_CHUNKS_IN_FLIGHT = 4;

/**
 * Reads records back by id through the list endpoint (`filter={"id":[…]}`, at most 100 ids per
 * request). Ids that no longer exist are simply absent from the result; duplicates are read once.
 * A request upstream refuses (`isRefusedPage`) is split in halves, read one after the other, down
 * to one id; one refused alone fails the read with `RecordsRefusedError`. No offsets are involved:
 * each part asks for its own ids.
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
  const readChunk = async (chunk: number[]): Promise<ApiRecord[]> => {
    const query: RecordListParams = { filter: { id: chunk }, sort: 'id', limit: chunk.length, offset: 0 };
    if (options.fields) query.fields = options.fields;
    let page: RecordPage;
    try {
      page = await fetch(query, options.signal);
    } catch (error) {
      if (!isRefusedPage(error) || options.signal?.aborted === true) throw error;
      if (chunk.length === 1) throw new RecordsRefusedError(error, `record ${chunk[0]}`);
      const half = Math.ceil(chunk.length / 2);
      options.onRefusedPage?.({ asked: chunk.length, next: half, message: error.upstreamMessage });
      const parts = [await readChunk(chunk.slice(0, half)), await readChunk(chunk.slice(half))];
      return parts.flat().sort((a, b) => Number(a.id) - Number(b.id));
    }
    if (page.page_info.has_more || page.data.length > chunk.length) {
      throw new InvalidResponseError(call, 'paging', `a filter on ${chunk.length} ids returned more records`);
    }
    // Every id not in the answer is taken for gone (the caller deletes its row): an answer
    // holding other records, or one twice, cannot be trusted to have looked for the rest.
    const asked = new Set(chunk);
    for (const record of page.data) {
      const id = Number(record.id);
      if (!asked.delete(id)) {
        const why = chunk.includes(id) ? `record ${record.id} twice` : `record ${record.id}, which was not asked for`;
        throw new InvalidResponseError(call, 'paging', `a filter on ${chunk.length} ids returned ${why}`);
      }
    }
    checkRecordFields(page.data, options.expectFields ?? options.fields ?? [], call);
    return page.data;
  };
  const results = await Promise.all(chunks.map((chunk) => limit.run(() => readChunk(chunk), options.signal)));
  return results.flat();
}
