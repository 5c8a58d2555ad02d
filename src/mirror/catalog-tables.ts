import { ConfigError } from '../errors.ts';

/**
 * The `_wsmirror_*` tables that store the catalog, the cursors and the outbox, described once as
 * data: each dialect turns the column kinds into its own types (catalog-ddl.ts). BI users read
 * these tables; docs/mirror.md describes them.
 */

/** Column kinds of the catalog tables; each dialect maps them to its types. */
export type CatalogColumnKind = 'text' | 'integer' | 'bigint' | 'boolean' | 'json' | 'timestamp' | 'serial';

export interface CatalogColumn {
  name: string;
  kind: CatalogColumnKind;
  notNull?: boolean;
  /** `now` (current time), a string or a number literal. */
  default?: 'now' | { literal: string | number };
  /** Allowed values (a CHECK constraint). */
  oneOf?: readonly string[];
  comment: string;
}

export interface CatalogTableDef {
  name: CatalogTableName;
  comment: string;
  columns: readonly CatalogColumn[];
  primaryKey: readonly string[];
  indexes?: readonly { name: string; columns: readonly string[] }[];
}

export type CatalogTableName =
  | '_wsmirror_meta'
  | '_wsmirror_tables'
  | '_wsmirror_fields'
  | '_wsmirror_choice_options'
  | '_wsmirror_cursors'
  | '_wsmirror_outbox'
  | '_wsmirror_created'
  /** A table a dialect adds for itself (`Dialect.extraCatalogTables`). */
  | `_wsmirror_${string}`;

export const OUTBOX_STATUSES = ['pending', 'failed', 'conflict'] as const;
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number];
export const OUTBOX_OPERATIONS = ['insert', 'update', 'delete'] as const;

/** Version of the catalog layout, stored in `_wsmirror_meta`. */
export const CATALOG_VERSION = 7;

/**
 * Layout changes since layout 1, applied in order to an older catalog when it is opened for
 * writing (operations/migrate-catalog.ts). Layout 2: `_wsmirror_outbox.sending_since`. Layout 3:
 * the readable views' names and the SQL tables of each field and of the table it references
 * (filled in by the migration from the catalog itself). Layout 4: the sync state of each table
 * (`current_as_of`, `last_error*`). Layout 5: appointment columns are `tstzrange` on Postgres
 * (no catalog column: the migration converts the columns, `Dialect.convertColumnSql`). Layout 6:
 * the outbox without its status index, and (SQLite) its checks restated as catalog-ddl.ts writes
 * them now; both made every captured edit cost more. Layout 7: `_wsmirror_outbox.retried_at`.
 */
export interface CatalogMigration {
  version: number;
  addColumns: readonly { table: CatalogTableName; column: string }[];
  dropIndexes?: readonly string[];
  /** Tables whose CHECK constraints are written again in the current form (`Dialect.restateChecks`). */
  restateChecks?: readonly CatalogTableName[];
}

export const CATALOG_MIGRATIONS: readonly CatalogMigration[] = [
  { version: 2, addColumns: [{ table: '_wsmirror_outbox', column: 'sending_since' }] },
  {
    version: 3,
    addColumns: [
      { table: '_wsmirror_tables', column: 'view_name' },
      { table: '_wsmirror_fields', column: 'sql_table' },
      { table: '_wsmirror_fields', column: 'ref_sql_table' },
    ],
  },
  {
    version: 4,
    addColumns: ['current_as_of', 'last_error_code', 'last_error', 'last_error_at'].map((column) => ({ table: '_wsmirror_tables' as const, column })),
  },
  { version: 5, addColumns: [] },
  { version: 6, addColumns: [], dropIndexes: ['_wsmirror_outbox_status'], restateChecks: ['_wsmirror_outbox'] },
  { version: 7, addColumns: [{ table: '_wsmirror_outbox', column: 'retried_at' }] },
];

/** Refuses (ConfigError) a catalog this version cannot read: a newer layout, or no version row. */
export function checkCatalogVersion(stored: string | undefined): void {
  if (stored === undefined) throw new ConfigError('the catalog has no catalog_version row in _wsmirror_meta');
  if (Number(stored) > CATALOG_VERSION) {
    throw new ConfigError(`the catalog was written by a newer wsmirror (layout ${stored}; this one knows ${CATALOG_VERSION})`);
  }
}

export const CATALOG_TABLES: readonly CatalogTableDef[] = [
  {
    name: '_wsmirror_meta',
    comment: 'wsmirror: catalog version and revision',
    columns: [
      { name: 'key', kind: 'text', notNull: true, comment: 'setting name' },
      { name: 'value', kind: 'text', notNull: true, comment: 'setting value' },
    ],
    primaryKey: ['key'],
  },
  {
    name: '_wsmirror_tables',
    comment: 'wsmirror: one row per mirrored upstream table',
    columns: [
      { name: 'table_id', kind: 'text', notNull: true, comment: 'upstream table id' },
      { name: 'module_id', kind: 'text', notNull: true, comment: 'upstream module id' },
      { name: 'module_name', kind: 'text', notNull: true, comment: 'upstream module name' },
      { name: 'module_label', kind: 'text', comment: 'module label' },
      { name: 'table_name', kind: 'text', notNull: true, comment: 'upstream table name' },
      { name: 'label', kind: 'text', comment: 'table label' },
      { name: 'labels', kind: 'json', notNull: true, comment: 'all labels, locale key to text' },
      { name: 'sql_name', kind: 'text', notNull: true, comment: 'name of the SQL table' },
      { name: 'has_history', kind: 'boolean', notNull: true, comment: 'history enabled upstream' },
      { name: 'mode', kind: 'text', notNull: true, oneOf: ['history', 'fullscan'], comment: 'how records are pulled' },
      { name: 'state', kind: 'text', notNull: true, oneOf: ['needs_backfill', 'ready'], comment: 'needs_backfill: every record must be read again' },
      { name: 'last_pull_at', kind: 'timestamp', comment: 'end of the last successful record pull' },
      { name: 'current_as_of', kind: 'timestamp', comment: 'start of the last successful record pull: the mirror holds upstream as of then (lag = now - this)' },
      { name: 'last_error_code', kind: 'text', comment: 'code of the error that failed the last pull (SAFETY_VALVE: blocked); null when it succeeded' },
      { name: 'last_error', kind: 'text', comment: 'message of the error that failed the last pull; null when it succeeded' },
      { name: 'last_error_at', kind: 'timestamp', comment: 'when the last pull failed; null when it succeeded' },
      { name: 'schema_changed_at', kind: 'timestamp', notNull: true, default: 'now', comment: 'when wsmirror last changed this table' },
      { name: 'view_name', kind: 'text', comment: 'name of the readable view of the table' },
    ],
    primaryKey: ['table_id'],
    indexes: [{ name: '_wsmirror_tables_sql_name', columns: ['sql_name'] }],
  },
  {
    name: '_wsmirror_fields',
    comment: 'wsmirror: one row per column of a mirrored table',
    columns: [
      { name: 'table_id', kind: 'text', notNull: true, comment: 'upstream table id' },
      { name: 'field_id', kind: 'text', notNull: true, comment: 'upstream field id' },
      { name: 'field_name', kind: 'text', notNull: true, comment: 'upstream field name' },
      { name: 'field_type', kind: 'text', notNull: true, comment: 'upstream field type' },
      { name: 'label', kind: 'text', comment: 'field label' },
      { name: 'labels', kind: 'json', notNull: true, comment: 'all labels, locale key to text' },
      { name: 'column_name', kind: 'text', notNull: true, comment: 'name of the SQL column' },
      { name: 'sql_type', kind: 'text', notNull: true, comment: 'SQL type of the column' },
      { name: 'position', kind: 'integer', notNull: true, comment: 'order of the field upstream' },
      { name: 'is_read_only', kind: 'boolean', notNull: true, comment: 'computed upstream, never pushed' },
      { name: 'ref_table_id', kind: 'text', comment: 'referenced table id (reference, reverse)' },
      { name: 'synced_from', kind: 'text', comment: 'upstream sync source column' },
      { name: 'options', kind: 'json', comment: 'option list (choice, multi) or selection expression (dchoice, dmulti)' },
      { name: 'sql_table', kind: 'text', comment: 'name of the SQL table holding the column' },
      { name: 'ref_sql_table', kind: 'text', comment: 'SQL table of the referenced table, when it is mirrored' },
    ],
    primaryKey: ['table_id', 'field_id'],
  },
  {
    name: '_wsmirror_choice_options',
    comment: 'wsmirror: options of choice and multi fields; join option_id to the column value',
    columns: [
      { name: 'table_id', kind: 'text', notNull: true, comment: 'upstream table id' },
      { name: 'field_id', kind: 'text', notNull: true, comment: 'upstream field id' },
      { name: 'sql_table', kind: 'text', notNull: true, comment: 'SQL table holding the field' },
      { name: 'column_name', kind: 'text', notNull: true, comment: 'SQL column holding option ids' },
      { name: 'option_id', kind: 'text', notNull: true, comment: 'option id stored in the column' },
      { name: 'name', kind: 'text', notNull: true, comment: 'option name' },
      { name: 'label', kind: 'text', comment: 'option label' },
      { name: 'labels', kind: 'json', notNull: true, comment: 'all labels, locale key to text' },
      { name: 'option_order', kind: 'integer', notNull: true, comment: 'display order' },
      { name: 'color', kind: 'text', comment: 'hex color' },
      { name: 'text_color', kind: 'text', comment: 'hex text color' },
      { name: 'icon', kind: 'text', comment: 'icon name' },
    ],
    primaryKey: ['table_id', 'field_id', 'option_id'],
    indexes: [{ name: '_wsmirror_choice_options_column', columns: ['sql_table', 'column_name'] }],
  },
  {
    name: '_wsmirror_cursors',
    comment: 'wsmirror: polling cursors (schema, and per table)',
    columns: [
      { name: 'name', kind: 'text', notNull: true, comment: 'cursor key, e.g. schema or table:<id>:records' },
      { name: 'value', kind: 'text', notNull: true, comment: 'cursor value' },
      { name: 'updated_at', kind: 'timestamp', notNull: true, default: 'now', comment: 'when the cursor last moved' },
    ],
    primaryKey: ['name'],
  },
  {
    name: '_wsmirror_outbox',
    comment: 'wsmirror: local edits waiting to be pushed upstream',
    columns: [
      { name: 'entry_id', kind: 'serial', notNull: true, comment: 'capture order' },
      { name: 'table_id', kind: 'text', notNull: true, comment: 'upstream table id' },
      { name: 'sql_table', kind: 'text', notNull: true, comment: 'SQL table edited' },
      { name: 'record_id', kind: 'bigint', comment: 'record id (id column)' },
      { name: 'operation', kind: 'text', notNull: true, oneOf: ['insert', 'update', 'delete'], comment: 'kind of edit' },
      { name: 'column_name', kind: 'text', comment: 'SQL column edited (update)' },
      { name: 'field_id', kind: 'text', comment: 'upstream field id of the column' },
      { name: 'new_value', kind: 'json', comment: 'value after the edit, as JSON' },
      { name: 'old_value', kind: 'json', comment: 'value before the edit, as JSON' },
      { name: 'changed_at', kind: 'timestamp', notNull: true, default: 'now', comment: 'when the edit was made' },
      { name: 'status', kind: 'text', notNull: true, default: { literal: 'pending' }, oneOf: OUTBOX_STATUSES, comment: 'pending, failed or conflict' },
      { name: 'attempts', kind: 'integer', notNull: true, default: { literal: 0 }, comment: 'push attempts so far' },
      { name: 'last_error', kind: 'text', comment: 'last upstream error message' },
      { name: 'next_attempt_at', kind: 'timestamp', comment: 'earliest time of the next attempt' },
      { name: 'sending_since', kind: 'timestamp', comment: 'when a push of this entry began and was not yet settled' },
      { name: 'retried_at', kind: 'timestamp', comment: 'when wsmirror outbox retry sent it again: the local value wins' },
    ],
    primaryKey: ['entry_id'],
    // Only the index the pull reads per batch. Every captured edit pays for each index, and the
    // outbox holds unsettled edits only, so reading the due ones scans it instead.
    indexes: [{ name: '_wsmirror_outbox_record', columns: ['table_id', 'record_id'] }],
  },
  {
    // Not in the outbox, which holds unsettled edits only (its readers scan it): a create's
    // entry goes once settled, and this is what is left of it.
    name: '_wsmirror_created',
    comment: 'wsmirror: rows inserted here and created upstream: the temporary id each had and the upstream id it took',
    columns: [
      { name: 'temp_id', kind: 'bigint', notNull: true, comment: 'temporary (negative) id the row had: minus its insert entry id' },
      { name: 'table_id', kind: 'text', notNull: true, comment: 'upstream table id' },
      { name: 'created_id', kind: 'bigint', notNull: true, comment: 'upstream id of the record created' },
      { name: 'created_at', kind: 'timestamp', notNull: true, default: 'now', comment: 'when the create was settled' },
    ],
    primaryKey: ['temp_id'],
  },
];

/** Kysely view of the catalog tables. Dialect-dependent columns are `unknown`. */
export interface CatalogDb {
  _wsmirror_meta: { key: string; value: string };
  _wsmirror_tables: {
    table_id: string;
    module_id: string;
    module_name: string;
    module_label: string | null;
    table_name: string;
    label: string | null;
    labels: unknown;
    sql_name: string;
    has_history: unknown;
    mode: string;
    state: string;
    last_pull_at: unknown;
    current_as_of: unknown;
    last_error_code: string | null;
    last_error: string | null;
    last_error_at: unknown;
    schema_changed_at: unknown;
    view_name: string | null;
  };
  _wsmirror_fields: {
    table_id: string;
    field_id: string;
    field_name: string;
    field_type: string;
    label: string | null;
    labels: unknown;
    column_name: string;
    sql_type: string;
    position: number;
    is_read_only: unknown;
    ref_table_id: string | null;
    synced_from: string | null;
    options: unknown;
    sql_table: string | null;
    ref_sql_table: string | null;
  };
  _wsmirror_choice_options: {
    table_id: string;
    field_id: string;
    sql_table: string;
    column_name: string;
    option_id: string;
    name: string;
    label: string | null;
    labels: unknown;
    option_order: number;
    color: string | null;
    text_color: string | null;
    icon: string | null;
  };
  _wsmirror_cursors: { name: string; value: string; updated_at: unknown };
  _wsmirror_outbox: {
    entry_id: unknown;
    table_id: string;
    sql_table: string;
    record_id: number | null;
    operation: string;
    column_name: string | null;
    field_id: string | null;
    new_value: unknown;
    old_value: unknown;
    changed_at: unknown;
    status: string;
    attempts: number;
    last_error: string | null;
    next_attempt_at: unknown;
    sending_since: unknown;
    retried_at: unknown;
  };
  _wsmirror_created: { temp_id: number; table_id: string; created_id: number; created_at?: unknown };
}
