// The mirror's public surface: what the sync engine, the daemon and the CLI import.
export type { CursorWrites, Mirror, MirrorLogger, OpenMirrorOptions, OutboxCount, RecordId, RowBatch, RowBatchResult } from './mirror.ts';
export { DAEMON_WRITE_CONDITION, openMirror } from './mirror.ts';
export type { Catalog, Labels, MirrorField, MirrorTable, OutboxStatus, TableMode, TableState } from './catalog.ts';
export { CATALOG_TABLES, OUTBOX_STATUSES, SCHEMA_CURSOR_KEY, fieldsOf, pickLabel, recordCursorKey, tableCursorPrefix } from './catalog.ts';
export type { EditOutcome, MirrorOutbox, OutboxEntry, OutboxFilter, OutboxOperation, PendingEdit } from './outbox.ts';
export type { SchemaOp, SchemaPlan } from './schema-planner.ts';
export { describeOp, planSchema } from './schema-planner.ts';
export type { TableFilter } from './table-filter.ts';
export { compileTableFilter } from './table-filter.ts';
export type { DialectName, ValueKind } from './type-map.ts';
export { SQL_TYPES, sqlTypeOf, valueKindOf } from './type-map.ts';
export type { SqlValue } from './value-codec.ts';
export { apiToSql, sqlToApi } from './value-codec.ts';
export { ID_COLUMN, SYNCED_AT_COLUMN, namingRules } from './naming.ts';
export { MirrorError, MirrorValueError } from './errors.ts';
export { parseMirrorUrl, redactUrl } from './mirror-url.ts';
