import type { ChangesPage, RecordChange, SchemaChange } from '../api/changes.ts';
import type { RecordIdInput } from '../api/identifiers.ts';
import type { ApiRecord } from '../api/records.ts';
import type { Table } from '../api/table.ts';
import type { Workspace } from '../api/workspace.ts';
import type {
  ChangesQueryParams, IterateRecordsOptions, KnownRecordChange, PollOptions, RecordCreateInput, RecordListParams,
  RecordPage, RecordRun, RecordsByIdsOptions, RecordUpdateInput,
} from '../client/index.ts';

/** `signal` ends the request, its retries and their waits included (a shutdown). */
export interface RequestOptions {
  signal?: AbortSignal;
}

/**
 * One poll of a change feed, page by page; `asOf` is the first page's `meta.asOf` (the next
 * poll's `since`, minus the lookback), known once the first page arrived.
 */
export interface ChangeFeed<T> extends AsyncIterable<T[]> {
  readonly asOf: string | undefined;
}

/**
 * What the engine needs from the upstream workspace: the port it depends on instead of the
 * concrete HTTP client. `WorkspaceClient` is the production implementation; tests wrap one to
 * inject exactly the failure they need (a 400 on one record of a batch, a 429, a crash between
 * send and acknowledgement). Errors are the client's: `UpstreamError`, `NetworkError`,
 * `InvalidResponseError` (src/errors.ts).
 */
export interface Upstream {
  getWorkspace(): Promise<Workspace>;
  /** One table with its fields; an `UpstreamError` with status 404 when upstream has no such table. */
  getTable(moduleName: string, tableName: string): Promise<Table>;
  listSchemaChanges(query: ChangesQueryParams): Promise<ChangesPage<SchemaChange>>;
  pollSchemaChanges(options: PollOptions): ChangeFeed<SchemaChange>;

  listRecords(moduleName: string, tableName: string, query?: RecordListParams, options?: RequestOptions): Promise<RecordPage>;
  /** Pages of a table's records in id order, each record once (see `iterateRecordPages`). */
  iterateRecords(moduleName: string, tableName: string, options?: IterateRecordsOptions): AsyncIterable<RecordRun>;
  /** About how many records a table holds (for progress and reports, never for decisions). */
  estimateRecordCount(moduleName: string, tableName: string, options?: { signal?: AbortSignal }): Promise<number>;
  /** The same for a table of more than one page; null for one that fits in a page, whose first page tells. */
  estimateRecordCountPastOnePage(moduleName: string, tableName: string, options?: { signal?: AbortSignal }): Promise<number | null>;
  /** The records with these ids that still exist. */
  getRecordsByIds(
    moduleName: string, tableName: string, ids: readonly RecordIdInput[], options?: RecordsByIdsOptions,
  ): Promise<ApiRecord[]>;
  listRecordChanges(moduleName: string, tableName: string, query: ChangesQueryParams): Promise<ChangesPage<RecordChange>>;
  pollRecordChanges(moduleName: string, tableName: string, options: PollOptions): ChangeFeed<KnownRecordChange>;

  /** Creates records in one transaction (all or nothing); their ids in request order. */
  createRecords(moduleName: string, tableName: string, records: RecordCreateInput, options?: RequestOptions): Promise<{ ids: string[] }>;
  /** Updates records in one transaction (all or nothing). */
  updateRecords(moduleName: string, tableName: string, records: RecordUpdateInput, options?: RequestOptions): Promise<{ updatedIds: string[] }>;
  /** Deletes records in one transaction (all or nothing: one missing id refuses the whole batch). */
  deleteRecords(moduleName: string, tableName: string, ids: RecordIdInput[], options?: RequestOptions): Promise<{ deletedIds: string[] }>;
}
