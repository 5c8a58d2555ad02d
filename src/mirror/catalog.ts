import type { Option } from '../api/field.ts';
import type { FieldType } from '../api/field-types.ts';
import type { DialectName } from './dialect-name.ts';

/**
 * The catalog: what the mirror holds, as data (`Catalog`), and the keys of its cursors.
 * catalog-tables.ts defines the `_wsmirror_*` tables that store it.
 */

export type Labels = Record<string, string>;

/** `history`: pulled through record changes; `fullscan`: periodic full scan and diff. */
export type TableMode = 'history' | 'fullscan';
/** `needs_backfill`: new, retyped, re-included or grown a column; every record must be read. */
export type TableState = 'needs_backfill' | 'ready';

export interface MirrorTable {
  tableId: string;
  moduleId: string;
  moduleName: string;
  moduleLabel: string | null;
  tableName: string;
  /** Base label (see `pickLabel`), also the Postgres table comment. */
  label: string | null;
  labels: Labels;
  sqlName: string;
  /**
   * Name of the table's readable view (readable-view.ts), chosen with the table names so the two
   * never collide. Null only in a catalog older than layout 3 opened read-only.
   */
  viewName: string | null;
  hasHistory: boolean;
  mode: TableMode;
  state: TableState;
  /** Set by the sync engine (`setTableState`); never by schema changes. */
  lastPullAt: string | null;
  /**
   * Start of the last successful pull: the upstream state the table holds (sync/table-lag.ts).
   * Set by the sync engine, like `lastPullAt`.
   */
  currentAsOf: string | null;
}

export interface MirrorField {
  tableId: string;
  fieldId: string;
  fieldName: string;
  fieldType: FieldType;
  label: string | null;
  labels: Labels;
  columnName: string;
  sqlType: string;
  /** Order of the field in the upstream table. */
  position: number;
  /** Computed upstream (function, reverse, ...): never pushed. */
  readOnly: boolean;
  refTableId: string | null;
  syncedFrom: string | null;
  /** Option list (choice, multi), selection expression (dchoice, dmulti) or expression (function). */
  options: Option[] | string | null;
}

export interface Catalog {
  dialect: DialectName;
  /** Bumped by every applied schema plan; a plan made from an older revision is refused. */
  revision: number;
  tables: MirrorTable[];
  fields: MirrorField[];
  /** Other relation and type names in the mirror's schema: never chosen for new tables. */
  foreignNames: string[];
  /**
   * Tables a catalog migration left as they were (operations/unmigrated-tables.ts): neither pulled
   * nor pushed, nor changed by a schema plan, until `Mirror.finishMigration` brings them up.
   */
  unmigrated: string[];
  /**
   * Tables whose SQL table is not in the database (dropped outside wsmirror, `DROP TABLE` in
   * psql or sqlite3): neither pulled nor pushed (their local edits wait) until `wsmirror resync`
   * makes them again (`Mirror.resetTables`) or they leave the mirror.
   */
  missing: string[];
  /**
   * Tables carrying a trigger wsmirror did not make, which a write of the daemon's would run as
   * its role (Postgres, postgres/foreign-triggers.ts; a write that fires one fails): held as
   * missing ones are, neither pulled nor pushed nor changed by a schema plan, until the trigger
   * is dropped. `message` names each trigger and the `DROP TRIGGER` to run. Empty on SQLite.
   */
  foreignTriggers: { tableId: string; message: string }[];
  /**
   * Other roles hold rights on the mirror's tables that let them act as the daemon (Postgres,
   * postgres/table-grants.ts: a write of the outbox, TRIGGER): `Mirror.revokeExtraGrants` takes
   * them back. False on SQLite.
   */
  extraGrants: boolean;
}

/**
 * The fields of each table, in position order, by the `fields` array they were read from: asked
 * once per table, a filter of every field made a schema step of N tables cost N² (1,500 tables of
 * 40 fields: 90 million comparisons each time). A catalog's arrays are never changed in place.
 */
const fieldsByTable = new WeakMap<readonly MirrorField[], Map<string, MirrorField[]>>();

export function fieldsOf(catalog: Pick<Catalog, 'fields'>, tableId: string): MirrorField[] {
  let byTable = fieldsByTable.get(catalog.fields);
  if (byTable === undefined) {
    byTable = new Map();
    for (const f of catalog.fields) {
      const list = byTable.get(f.tableId);
      if (list) list.push(f);
      else byTable.set(f.tableId, [f]);
    }
    for (const list of byTable.values()) list.sort((a, b) => a.position - b.position);
    fieldsByTable.set(catalog.fields, byTable);
  }
  return [...(byTable.get(tableId) ?? [])];
}

/** The label shown for an object: the base label (key ''), else `en`, else the first locale. */
export function pickLabel(labels: Labels | undefined): string | null {
  if (!labels) return null;
  if (labels[''] !== undefined && labels[''] !== '') return labels[''];
  if (labels['en'] !== undefined && labels['en'] !== '') return labels['en'];
  const first = Object.keys(labels).sort().find((k) => labels[k] !== '');
  return first === undefined ? null : labels[first]!;
}

// ---- cursors -----------------------------------------------------------------------------------

/** Key of the schema-changes cursor. */
export const SCHEMA_CURSOR_KEY = 'schema';

/** Prefix of every cursor owned by one table; they are deleted with the table. */
export function tableCursorPrefix(tableId: string): string {
  return `table:${tableId}:`;
}

/** Key of a table's record-changes cursor (history tables). */
export function recordCursorKey(tableId: string): string {
  return `${tableCursorPrefix(tableId)}records`;
}

/** Key of the changes cursor a history table's backfill took before its first page; kept until it commits. */
export function backfillCursorKey(tableId: string): string {
  return `${tableCursorPrefix(tableId)}backfill-since`;
}

/** Key of the checkpoint of a backfill or full scan under way: where it resumes after a stop. */
export function scanCursorKey(tableId: string): string {
  return `${tableCursorPrefix(tableId)}scan`;
}

/** `module.table`: how logs, metrics, reports and commands name a mirrored table. */
export function tableLabel(table: Pick<MirrorTable, 'moduleName' | 'tableName'>): string {
  return `${table.moduleName}.${table.tableName}`;
}
