import type * as z from 'zod';
import { RECORD_CHANGE_TYPES, type ChangesPage, type RecordChange, type SchemaChange } from '../api/changes.ts';
import type { PageInfo } from '../api/common.ts';
import type {
  Field, fieldBatchCreateSchema, fieldBatchUpdateSchema, fieldCreateSchema, fieldUpdateSchema,
} from '../api/field.ts';
import { stat } from 'node:fs/promises';
import { csvImportOptionParts, type CsvImportOptionsInput } from '../api/csv-import.ts';
import type { RecordIdInput } from '../api/identifiers.ts';
import { UsageError, type UpstreamCall } from '../errors.ts';
import { CSV_FILE_LIMIT_BYTES, type ApiRecord, type recordCreateBodySchema, type recordUpdateBodySchema } from '../api/records.ts';
import type { Table, tableCreateSchema, tablePatchSchema } from '../api/table.ts';
import type { Workspace } from '../api/workspace.ts';
import { AsOfProgress, checkAsOf } from './as-of-bounds.ts';
import { ChangePoll, type PollOptions } from './change-poller.ts';
import { resolveClientOptions, type WorkspaceClientOptions } from './client-options.ts';
import { HttpTransport, type CallOptions, type QueryValue } from './http-transport.ts';
import { multipartUpload } from './multipart-upload.ts';
import { estimateRecordCount, estimateRecordCountPastOnePage } from './record-count.ts';
import { iterateRecordPages, type IterateRecordsOptions, type RecordRun, type RecordListParams, type RecordPage } from './record-pager.ts';
import { readRecordsByIds, type RecordsByIdsOptions } from './records-by-ids.ts';

export type TableCreateInput = z.input<typeof tableCreateSchema>;
export type TablePatchInput = z.input<typeof tablePatchSchema>;
export type FieldCreateInput = z.input<typeof fieldCreateSchema>;
export type FieldBatchCreateInput = z.input<typeof fieldBatchCreateSchema>;
export type FieldUpdateInput = z.input<typeof fieldUpdateSchema>;
export type FieldBatchUpdateInput = z.input<typeof fieldBatchUpdateSchema>;
/** Flat objects of field name to value. */
export type RecordCreateInput = z.input<typeof recordCreateBodySchema>['records'];
/** Flat objects of field name to value, each with the `id` of an existing record. */
export type RecordUpdateInput = z.input<typeof recordUpdateBodySchema>['records'];

export interface ChangesQueryParams {
  since: string;
  asOf?: string;
  limit?: number;
  offset?: number;
}

/** A record change whose `changeType` is one of the known three; any other value reads as `update`. */
export type KnownRecordChange = RecordChange & { changeType: (typeof RECORD_CHANGE_TYPES)[number] };

export interface CsvImportResult {
  rowsImported: number;
  rowsSkipped: number;
  rowsUpdated: number;
}

export interface CsvImportCallOptions extends CallOptions {
  /** Called as the file goes out: bytes of it sent so far, and its size. */
  onProgress?: (sentBytes: number, totalBytes: number) => void;
}

/** An import uploads up to 50 MiB and then waits for the whole transaction: each attempt may take this long. */
export const CSV_IMPORT_TIMEOUT_MS = 10 * 60_000;

export interface FieldPage {
  data: Field[];
  page_info: PageInfo;
}

/**
 * Typed client of the upstream API: one method per endpoint of `src/api/endpoints.ts`, plus the change polls and record paging the sync engine needs. Every response
 * is validated against its endpoint's schema. Request bodies are not validated here: the
 * upstream is the authority, and its 400 message is what the push step reports.
 */
export class WorkspaceClient {
  readonly workspaceId: string;
  readonly #transport: HttpTransport;
  /** Each changes feed's last `meta.asOf`: how far the next may run ahead (as-of-bounds.ts). */
  readonly #asOf = new AsOfProgress();

  constructor(options: WorkspaceClientOptions) {
    const resolved = resolveClientOptions(options);
    this.workspaceId = resolved.workspaceId;
    this.#transport = new HttpTransport(resolved);
  }

  /** Finishes in-flight requests and closes the connection pool. */
  close(): Promise<void> {
    return this.#transport.close();
  }

  // ---- workspace and schema changes ---------------------------------------------------------

  async getWorkspace(opts?: CallOptions): Promise<Workspace> {
    return (await this.#transport.call('getWorkspace', { params: this.#ws() }, opts)).data;
  }

  /**
   * A window's end (no `asOf` sent) may become a cursor: checked against this clock and the
   * feed's last one. A later page's, asked with the window's `asOf`, is not taken; it is checked
   * against this clock only.
   */
  #checkAsOf(call: UpstreamCall, query: ChangesQueryParams, asOf: string): void {
    if (query.asOf === undefined) this.#asOf.check(call, query.since, asOf);
    else checkAsOf(call, query.since, asOf);
  }

  async listSchemaChanges(query: ChangesQueryParams, opts?: CallOptions): Promise<ChangesPage<SchemaChange>> {
    const params = this.#ws();
    const page = await this.#transport.call('listSchemaChanges', { params, query: changesQuery(query) }, opts);
    this.#checkAsOf(this.#transport.describe('listSchemaChanges', params), query, page.meta.asOf);
    return page;
  }

  /** One poll of schema changes; see `ChangePoll`. */
  pollSchemaChanges(options: PollOptions): ChangePoll<SchemaChange> {
    return new ChangePoll(
      (query, signal) => this.listSchemaChanges(query, { signal }),
      options,
      this.#transport.describe('listSchemaChanges', this.#ws()),
    );
  }

  // ---- tables -------------------------------------------------------------------------------

  async listTables(moduleName: string, opts?: CallOptions): Promise<Table[]> {
    return (await this.#transport.call('listTables', { params: this.#mod(moduleName) }, opts)).data;
  }

  async createTable(moduleName: string, body: TableCreateInput, opts?: CallOptions): Promise<Table> {
    return (await this.#transport.call('createTable', { params: this.#mod(moduleName), body }, opts)).data;
  }

  async getTable(moduleName: string, tableName: string, opts?: CallOptions): Promise<Table> {
    return (await this.#transport.call('getTable', { params: this.#tbl(moduleName, tableName) }, opts)).data;
  }

  async updateTable(moduleName: string, tableName: string, body: TablePatchInput, opts?: CallOptions): Promise<Table> {
    return (await this.#transport.call('updateTable', { params: this.#tbl(moduleName, tableName), body }, opts)).data;
  }

  async deleteTable(moduleName: string, tableName: string, opts?: CallOptions): Promise<{ id: string }> {
    return (await this.#transport.call('deleteTable', { params: this.#tbl(moduleName, tableName) }, opts)).data;
  }

  // ---- fields -------------------------------------------------------------------------------

  listFields(
    moduleName: string, tableName: string, query: { limit?: number; offset?: number } = {}, opts?: CallOptions,
  ): Promise<FieldPage> {
    return this.#transport.call('listFields', {
      params: this.#tbl(moduleName, tableName), query: { limit: query.limit, offset: query.offset },
    }, opts);
  }

  async createField(moduleName: string, tableName: string, body: FieldCreateInput, opts?: CallOptions): Promise<Field> {
    return (await this.#transport.call('createField', { params: this.#tbl(moduleName, tableName), body }, opts)).data;
  }

  /** Creates fields in one transaction. */
  async createFields(moduleName: string, tableName: string, body: FieldBatchCreateInput, opts?: CallOptions): Promise<Field[]> {
    return (await this.#transport.call('createFields', { params: this.#tbl(moduleName, tableName), body }, opts)).data;
  }

  async getField(moduleName: string, tableName: string, fieldName: string, opts?: CallOptions): Promise<Field> {
    return (await this.#transport.call('getField', { params: this.#fld(moduleName, tableName, fieldName) }, opts)).data;
  }

  async updateField(
    moduleName: string, tableName: string, fieldName: string, body: FieldUpdateInput, opts?: CallOptions,
  ): Promise<Field> {
    const params = this.#fld(moduleName, tableName, fieldName);
    return (await this.#transport.call('updateField', { params, body }, opts)).data;
  }

  /** Updates fields in one transaction; each item names its field in `fieldName`. */
  async updateFields(moduleName: string, tableName: string, body: FieldBatchUpdateInput, opts?: CallOptions): Promise<Field[]> {
    return (await this.#transport.call('updateFields', { params: this.#tbl(moduleName, tableName), body }, opts)).data;
  }

  async deleteField(moduleName: string, tableName: string, fieldName: string, opts?: CallOptions): Promise<Field> {
    return (await this.#transport.call('deleteField', { params: this.#fld(moduleName, tableName, fieldName) }, opts)).data;
  }

  /** Deletes fields in one transaction. */
  async deleteFields(moduleName: string, tableName: string, fieldNames: string[], opts?: CallOptions): Promise<Field[]> {
    const spec = { params: this.#tbl(moduleName, tableName), body: { fieldNames } };
    return (await this.#transport.call('deleteFields', spec, opts)).data;
  }

  // ---- records ------------------------------------------------------------------------------

  listRecords(moduleName: string, tableName: string, query: RecordListParams = {}, opts?: CallOptions): Promise<RecordPage> {
    return this.#transport.call('listRecords', { params: this.#tbl(moduleName, tableName), query: recordQuery(query) }, opts);
  }

  /** Creates records in one transaction; returns their ids in order. POST: see `RetryMode` for retries. */
  async createRecords(
    moduleName: string, tableName: string, records: RecordCreateInput, opts?: CallOptions,
  ): Promise<{ ids: string[] }> {
    return (await this.#transport.call('createRecords', { params: this.#tbl(moduleName, tableName), body: { records } }, opts)).data;
  }

  /** Updates records in one transaction. */
  async updateRecords(
    moduleName: string, tableName: string, records: RecordUpdateInput, opts?: CallOptions,
  ): Promise<{ updatedIds: string[] }> {
    return (await this.#transport.call('updateRecords', { params: this.#tbl(moduleName, tableName), body: { records } }, opts)).data;
  }

  /** Deletes records in one transaction. */
  async deleteRecords(
    moduleName: string, tableName: string, ids: RecordIdInput[], opts?: CallOptions,
  ): Promise<{ deletedIds: string[] }> {
    const spec = { params: this.#tbl(moduleName, tableName), body: { records: ids } };
    return (await this.#transport.call('deleteRecords', spec, opts)).data;
  }

  /**
   * Imports a CSV file into a table (`POST …/records/import/csv`), streamed from disk as a
   * multipart form with the options as its other parts. A file over 50 MiB is refused here,
   * before anything is sent. POST: repeated only when the upstream cannot have run it (see
   * `RetryMode`); each attempt reads the file again. Each attempt may take `CSV_IMPORT_TIMEOUT_MS`
   * unless `timeoutMs` says otherwise.
   */
  async importCsv(
    moduleName: string, tableName: string, filePath: string, options: CsvImportOptionsInput = {},
    opts: CsvImportCallOptions = {},
  ): Promise<CsvImportResult> {
    let size: number;
    try {
      const info = await stat(filePath);
      if (!info.isFile()) throw new UsageError(`${filePath} is not a file`);
      size = info.size;
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`cannot read ${filePath}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (size > CSV_FILE_LIMIT_BYTES) {
      throw new UsageError(`${filePath} is ${size} bytes; a CSV import takes at most ${CSV_FILE_LIMIT_BYTES} bytes (50 MiB)`);
    }
    const { onProgress, ...callOptions } = opts;
    const upload = multipartUpload(
      csvImportOptionParts(options),
      { part: 'file', path: filePath, size, contentType: 'text/csv' },
      onProgress && ((sent) => onProgress(sent, size)),
    );
    const spec = { params: this.#tbl(moduleName, tableName), upload };
    return (await this.#transport.call('importCsv', spec, { timeoutMs: CSV_IMPORT_TIMEOUT_MS, ...callOptions })).data;
  }

  async listRecordChanges(
    moduleName: string, tableName: string, query: ChangesQueryParams, opts?: CallOptions,
  ): Promise<ChangesPage<RecordChange>> {
    const params = this.#tbl(moduleName, tableName);
    const page = await this.#transport.call('listRecordChanges', { params, query: changesQuery(query) }, opts);
    this.#checkAsOf(this.#transport.describe('listRecordChanges', params), query, page.meta.asOf);
    return page;
  }

  /**
   * One poll of a history table's record changes; see `ChangePoll`. Change types other than
   * `create`, `update` and `delete` come out as `update`: re-reading the record is always safe.
   */
  pollRecordChanges(moduleName: string, tableName: string, options: PollOptions): ChangePoll<KnownRecordChange> {
    return new ChangePoll(
      async (query, signal) => {
        const page = await this.listRecordChanges(moduleName, tableName, query, { signal });
        return { ...page, data: page.data.map(knownChange) };
      },
      options,
      this.#transport.describe('listRecordChanges', this.#tbl(moduleName, tableName)),
    );
  }

  /** Pages of a table's records for a backfill or full scan: id order, each record once, no gap (see `iterateRecordPages`). */
  iterateRecords(
    moduleName: string, tableName: string, options: IterateRecordsOptions = {},
  ): AsyncGenerator<RecordRun, void, undefined> {
    return iterateRecordPages(
      async (query, signal) => {
        let bodyBytes: number | undefined;
        const page = await this.listRecords(moduleName, tableName, query, { signal, onBodyBytes: (bytes) => { bodyBytes = bytes; } });
        return { ...page, bodyBytes };
      },
      options,
      this.#transport.describe('listRecords', this.#tbl(moduleName, tableName)),
    );
  }

  /** About how many records a table holds (see `estimateRecordCount`). */
  estimateRecordCount(moduleName: string, tableName: string, opts: { signal?: AbortSignal } = {}): Promise<number> {
    return estimateRecordCount((query, signal) => this.listRecords(moduleName, tableName, query, { signal }), opts.signal);
  }

  /** The same for a table of more than a page; null for one that fits in a page (see `estimateRecordCountPastOnePage`). */
  estimateRecordCountPastOnePage(moduleName: string, tableName: string, opts: { signal?: AbortSignal } = {}): Promise<number | null> {
    return estimateRecordCountPastOnePage((query, signal) => this.listRecords(moduleName, tableName, query, { signal }), opts.signal);
  }

  /** The records with these ids that still exist, in id order per chunk of 100. */
  getRecordsByIds(
    moduleName: string, tableName: string, ids: readonly RecordIdInput[], options: RecordsByIdsOptions = {},
  ): Promise<ApiRecord[]> {
    return readRecordsByIds(
      (query, signal) => this.listRecords(moduleName, tableName, query, { signal }),
      ids,
      options,
      this.#transport.describe('listRecords', this.#tbl(moduleName, tableName)),
    );
  }

  // ---- path parameters ----------------------------------------------------------------------

  #ws() {
    return { workspaceId: this.workspaceId };
  }

  #mod(moduleName: string) {
    return { workspaceId: this.workspaceId, moduleName };
  }

  #tbl(moduleName: string, tableName: string) {
    return { workspaceId: this.workspaceId, moduleName, tableName };
  }

  #fld(moduleName: string, tableName: string, fieldName: string) {
    return { workspaceId: this.workspaceId, moduleName, tableName, fieldName };
  }
}

function knownChange(change: RecordChange): KnownRecordChange {
  const known = (RECORD_CHANGE_TYPES as readonly string[]).includes(change.changeType);
  return known ? (change as KnownRecordChange) : { ...change, changeType: 'update' };
}

function changesQuery(query: ChangesQueryParams): Record<string, QueryValue> {
  return { since: query.since, asOf: query.asOf, limit: query.limit, offset: query.offset };
}

function recordQuery(query: RecordListParams): Record<string, QueryValue> {
  return {
    fields: query.fields?.join(','),
    filter: query.filter === undefined ? undefined : JSON.stringify(query.filter),
    limit: query.limit,
    offset: query.offset,
    sort: query.sort,
  };
}
