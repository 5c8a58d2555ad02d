import type { Kysely, Selectable } from 'kysely';
import type { FieldType } from '../../api/field-types.ts';
import type { Catalog, Labels, MirrorField, MirrorTable, TableMode, TableState } from '../catalog.ts';
import { fieldsOf } from '../catalog.ts';
import type { CatalogDb } from '../catalog-tables.ts';
import type { DialectDriver } from '../dialect-driver.ts';
import { MirrorError } from '../errors.ts';
import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext, TableInfo } from '../mirror-context.ts';
import { CATALOG_PREFIX } from '../naming.ts';
import { parseUnmigrated, UNMIGRATED_KEY } from './unmigrated-tables.ts';

/**
 * A snapshot of the catalog; also refreshes the context's table cache. Its reads go together,
 * in one snapshot (Dialect.readStatements; on Postgres one round trip).
 */
export async function readCatalog(ctx: MirrorContext): Promise<Catalog> {
  assertOpen(ctx);
  const d = ctx.driver;
  const cat = d.catalog(d.db);
  const triggersQuery = d.foreignTriggersQuery();
  const grantsQuery = d.extraGrantsQuery();
  const [metaRows, tableRows, fieldRows, nameRows, triggerRows = [], grantRows = []] = await d.readStatements([
    metaQuery(cat).compile(), tablesQuery(cat).compile(), fieldsQuery(cat).compile(), d.namespaceNamesQuery(),
    ...(triggersQuery === undefined || grantsQuery === undefined ? [] : [triggersQuery, grantsQuery]),
  ]);
  const meta = new Map((metaRows as { key: string; value: string }[]).map((r) => [r.key, r.value]));
  const revision = Number(meta.get('revision') ?? 0);
  const { tables, fields } = catalogTablesOf(d, tableRows as TableRow[], fieldRows as FieldRow[]);
  const own = new Set(tables.flatMap((t) => (t.viewName === null ? [t.sqlName] : [t.sqlName, t.viewName])));
  const names = (nameRows as { name: string }[]).map((r) => r.name);
  const foreignNames = names.filter((n) => !own.has(n) && !n.startsWith(CATALOG_PREFIX)).sort();
  const missing = absentTables(tables, names);
  const foreignTriggers = triggeredTables(tables, triggerRows as { table: string; message: string }[]);
  const triggered = new Set(foreignTriggers.map((t) => t.tableId));
  ctx.tables = new Map(tables.map((t) => [t.tableId, {
    table: t, fields: fieldsOf({ fields }, t.tableId), missing: missing.includes(t.tableId), foreignTrigger: triggered.has(t.tableId),
  }]));
  return {
    dialect: ctx.dialect.name, revision, tables, fields, foreignNames, unmigrated: parseUnmigrated(meta.get(UNMIGRATED_KEY)), missing, foreignTriggers,
    extraGrants: grantRows.length > 0,
  };
}

/**
 * The mirrored tables among those carrying foreign triggers, each with its triggers' messages.
 * One on a `_wsmirror_*` table holds no table back: it fails every write of the daemon's.
 */
function triggeredTables(tables: readonly MirrorTable[], rows: readonly { table: string; message: string }[]): Catalog['foreignTriggers'] {
  const bySqlName = Map.groupBy(rows, (r) => r.table);
  return tables.flatMap((t) => {
    const of = bySqlName.get(t.sqlName);
    return of === undefined ? [] : [{ tableId: t.tableId, message: of.map((r) => r.message).join('; ') }];
  });
}

/** The ids of `tables` whose SQL table is not among `names` (the namespace's): dropped outside wsmirror. */
export function absentTables(tables: readonly Pick<MirrorTable, 'tableId' | 'sqlName'>[], names: readonly string[]): string[] {
  const present = new Set(names);
  return tables.filter((t) => !present.has(t.sqlName)).map((t) => t.tableId);
}

/** The ids of `tables` whose SQL table the database of `db` (the connection, or a write transaction) does not hold. */
export async function absentTablesIn(d: DialectDriver, db: Kysely<CatalogDb>, tables: readonly Pick<MirrorTable, 'tableId' | 'sqlName'>[]): Promise<string[]> {
  if (tables.length === 0) return [];
  const { rows } = await db.executeQuery<{ name: string }>(d.namespaceNamesQuery());
  return absentTables(tables, rows.map((r) => r.name));
}

const tablesQuery = (cat: Kysely<CatalogDb>) => cat.selectFrom('_wsmirror_tables').selectAll().orderBy('table_id');
const fieldsQuery = (cat: Kysely<CatalogDb>) => cat.selectFrom('_wsmirror_fields').selectAll().orderBy('table_id').orderBy('position');
const revisionQuery = (cat: Kysely<CatalogDb>) => cat.selectFrom('_wsmirror_meta').select('value').where('key', '=', 'revision');
const metaQuery = (cat: Kysely<CatalogDb>) => cat.selectFrom('_wsmirror_meta').select(['key', 'value']).where('key', 'in', ['revision', UNMIGRATED_KEY]);

type TableRow = Selectable<CatalogDb['_wsmirror_tables']>;
type FieldRow = Selectable<CatalogDb['_wsmirror_fields']>;

/**
 * The mirrored tables and fields as the catalog tables hold them, read through `cat` (the
 * connection, or a write transaction that is changing them).
 */
export async function readCatalogTables(
  d: DialectDriver, cat: Kysely<CatalogDb>,
): Promise<{ tables: MirrorTable[]; fields: MirrorField[] }> {
  return catalogTablesOf(d, await tablesQuery(cat).execute(), await fieldsQuery(cat).execute());
}

function catalogTablesOf(d: DialectDriver, tableRows: readonly TableRow[], fieldRows: readonly FieldRow[]): { tables: MirrorTable[]; fields: MirrorField[] } {
  const tables: MirrorTable[] = tableRows.map((r) => ({
    tableId: r.table_id,
    moduleId: r.module_id,
    moduleName: r.module_name,
    moduleLabel: r.module_label,
    tableName: r.table_name,
    label: r.label,
    labels: (d.fromJson(r.labels) ?? {}) as Labels,
    sqlName: r.sql_name,
    // Absent before layout 3 (a catalog opened read-only is not migrated).
    viewName: r.view_name ?? null,
    hasHistory: d.fromBool(r.has_history),
    mode: r.mode as TableMode,
    state: r.state as TableState,
    lastPullAt: d.fromTimestamp(r.last_pull_at),
    // Absent before the layout that added the table state columns (read-only, as above).
    currentAsOf: d.fromTimestamp(r.current_as_of),
  }));
  const fields: MirrorField[] = fieldRows.map((r) => ({
    tableId: r.table_id,
    fieldId: r.field_id,
    fieldName: r.field_name,
    fieldType: r.field_type as FieldType,
    label: r.label,
    labels: (d.fromJson(r.labels) ?? {}) as Labels,
    columnName: r.column_name,
    sqlType: r.sql_type,
    position: Number(r.position),
    readOnly: d.fromBool(r.is_read_only),
    refTableId: r.ref_table_id,
    syncedFrom: r.synced_from,
    options: (d.fromJson(r.options) ?? null) as MirrorField['options'],
  }));
  return { tables, fields };
}

/**
 * The mirrored tables with their fields, by upstream id, as cached in the context: read once, and
 * again after the daemon changes the schema (which drops the cache).
 */
export async function cachedTables(ctx: MirrorContext): Promise<ReadonlyMap<string, TableInfo>> {
  assertOpen(ctx);
  if (!ctx.tables) await readCatalog(ctx);
  return ctx.tables!;
}

/** A mirrored table by upstream id (from the cached catalog); MirrorError when it is not mirrored. */
export async function mirroredTable(ctx: MirrorContext, tableId: string): Promise<TableInfo> {
  const info = (await cachedTables(ctx)).get(tableId);
  if (!info) throw new MirrorError(`table ${tableId} is not mirrored (not in the catalog)`);
  return info;
}

export async function readRevision(cat: Kysely<CatalogDb>): Promise<number> {
  return revisionOf(await revisionQuery(cat).execute());
}

function revisionOf(rows: readonly { value: string }[]): number {
  return Number(rows[0]?.value ?? 0);
}
