import type { MirrorField, MirrorTable } from '../mirror/catalog.ts';
import type { Mirror } from '../mirror/mirror.ts';
import type { SyncLogger, SyncObserver } from './observer.ts';
import type { SyncOptions } from './sync-options.ts';
import type { Upstream } from './upstream.ts';

/** What every step of a cycle works with. */
export interface SyncContext {
  readonly client: Upstream;
  readonly mirror: Mirror;
  readonly options: SyncOptions;
  readonly logger: SyncLogger;
  readonly observer: SyncObserver;
  /** Aborts between two mirror transactions. */
  readonly signal?: AbortSignal;
}

/** A mirrored table as the record pull sees it: its catalog row and the names of its fields. */
export interface PulledTable extends MirrorTable {
  /** The table's fields as the catalog had them when the pull began. */
  readonly fields: readonly MirrorField[];
  /** Every record read for the table must carry these (a missing value is not a null). */
  readonly fieldNames: readonly string[];
  /** The table's columns in one string: a scan checkpoint taken under other columns is void. */
  readonly shape: string;
}

/** `PulledTable` of a catalog table and its fields. */
export function pulledTable(table: MirrorTable, fields: readonly MirrorField[]): PulledTable {
  return {
    ...table,
    fields,
    fieldNames: fields.map((f) => f.fieldName),
    shape: [table.mode, ...fields.map((f) => `${f.fieldId}:${f.fieldType}:${f.columnName}:${f.sqlType}`)].join(','),
  };
}

export { tableLabel } from '../mirror/catalog.ts';
