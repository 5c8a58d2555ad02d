// The typed client of the upstream API (the daemon's only way to talk to it).
export { CSV_IMPORT_TIMEOUT_MS, WorkspaceClient } from './workspace-client.ts';
export type {
  ChangesQueryParams, CsvImportCallOptions, CsvImportResult, FieldBatchCreateInput, KnownRecordChange, FieldBatchUpdateInput, FieldCreateInput, FieldPage, FieldUpdateInput,
  RecordCreateInput, RecordUpdateInput, TableCreateInput, TablePatchInput,
} from './workspace-client.ts';
export { CLIENT_DEFAULTS } from './client-options.ts';
export type { ClientLogger, RequestInfo, WorkspaceClientOptions } from './client-options.ts';
export type { CallOptions } from './http-transport.ts';
export { queryString, sleep } from './http-transport.ts';
export type { RetryMode } from './retry-policy.ts';
export { ChangePoll } from './change-poller.ts';
export type { PollOptions } from './change-poller.ts';
export type { IterateRecordsOptions, RecordListParams, RecordPage, RecordPosition, RecordRun } from './record-pager.ts';
export type { RecordsByIdsOptions } from './records-by-ids.ts';
export { isRefusedPage, type RefusedPage } from './refused-page.ts';
export { ConcurrencyLimit } from './concurrency-limit.ts';
export { InvalidResponseError, NetworkError, RecordsRefusedError, UpstreamError } from '../errors.ts';
// Pieces the conformance suite sends its own (deliberately unvalidated) requests with.
export { resolveClientOptions } from './client-options.ts';
export type { ResolvedClientOptions } from './client-options.ts';
export { backoffDelay, isNotSentCode, networkErrorCode, parseRetryAfter } from './retry-policy.ts';
export { readBoundedBody } from './bounded-body.ts';
export { requestsWritten } from './requests-written.ts';
