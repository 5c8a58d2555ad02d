import { createHash } from 'node:crypto';

/**
 * SQL names of mirrored tables and columns (DESIGN §3). Names are decided once, when an object
 * first appears or is renamed upstream, and recorded in the catalog; an unchanged object keeps
 * its name forever, so nothing is re-created from one run to the next.
 */

/** Columns every mirrored table has. */
export const ID_COLUMN = 'id';
export const SYNCED_AT_COLUMN = '_synced_at';
export const SYSTEM_COLUMNS: readonly string[] = [ID_COLUMN, SYNCED_AT_COLUMN];
/** What the system columns hold, in words (Postgres comments, the data dictionary). */
export const SYSTEM_COLUMN_COMMENTS: Readonly<Record<string, string>> = {
  [ID_COLUMN]: 'record id',
  [SYNCED_AT_COLUMN]: 'when wsmirror last wrote this row',
};

/** Prefix of the catalog tables; also kept free for future system columns. */
export const CATALOG_PREFIX = '_wsmirror_';

/**
 * Prefix given to a field whose name is a system column, starts with `_wsmirror_`, or is a
 * column name the mirror's database keeps for itself.
 */
export const FIELD_RENAME_PREFIX = 'f_';
/** Prefix given to a table whose name would start with a reserved prefix. */
export const TABLE_RENAME_PREFIX = 't_';

/** A dialect's identifier rules (`Dialect.naming`). */
export interface NamingRules {
  /** Longest identifier in bytes (names are ASCII, so characters). */
  maxLength: number;
  /** Table names that must not be used as they are. */
  reservedTablePrefixes: readonly string[];
  /** Column names the database refuses in a table of its own (Postgres' system columns). */
  reservedColumnNames: readonly string[];
  /** Most columns a table holds, and a view (its result columns) shows. */
  maxTableColumns: number;
  maxViewColumns: number;
}

/** 8 hex characters of SHA-256: the stable suffix of shortened or disambiguated names. */
export function hash8(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/** `<module>__<table>`, prefixed with `t_` when it would start with a reserved prefix. */
export function baseTableName(rules: NamingRules, moduleName: string, tableName: string): string {
  const name = `${moduleName}__${tableName}`;
  return rules.reservedTablePrefixes.some((p) => name.startsWith(p)) ? `${TABLE_RENAME_PREFIX}${name}` : name;
}

/**
 * Whether the table `tableId`, named `moduleName.tableName`, may have had `sqlName`: its base name
 * (fitted), or that with the suffix the allocator gives a name already taken. For the edits of a
 * table no longer mirrored, whose catalog row is gone and whose outbox entries keep the SQL name.
 */
export function couldBeTableName(rules: NamingRules, sqlName: string, tableId: string, moduleName: string, tableName: string): boolean {
  const base = baseTableName(rules, moduleName, tableName);
  return sqlName === fitName(base, rules.maxLength) || sqlName === withSuffix(base, hash8(tableId), rules.maxLength);
}

/** Suffix of a readable view's name: the view of `crm__deals` is `crm__deals_v`. */
const VIEW_SUFFIX = '_v';

/** The name asked for the readable view of `sqlTable` (the allocator may disambiguate it). */
export function baseViewName(sqlTable: string): string {
  return `${sqlTable}${VIEW_SUFFIX}`;
}

/** The salt that disambiguates a view's name: its table's upstream id, marked as the view's. */
export function viewSalt(tableId: string): string {
  return `${tableId}#view`;
}

/**
 * The field name, prefixed with `f_` when it is a system column, starts with `_wsmirror_`, or is
 * a name the dialect reserves.
 */
export function baseColumnName(rules: NamingRules, fieldName: string): string {
  return isReservedColumn(rules, fieldName) ? `${FIELD_RENAME_PREFIX}${fieldName}` : fieldName;
}

function isReservedColumn(rules: NamingRules, name: string): boolean {
  return SYSTEM_COLUMNS.includes(name) || name.startsWith(CATALOG_PREFIX) || rules.reservedColumnNames.includes(name);
}

/**
 * Shortens a name to `maxLength`: the longest prefix that leaves room for `_` and the hash of
 * the whole name. Two long names with the same prefix get different hashes.
 */
export function fitName(name: string, maxLength: number): string {
  if (name.length <= maxLength) return name;
  return `${name.slice(0, maxLength - 9)}_${hash8(name)}`;
}

/** `<base>_<suffix>`, the base cut so that the whole fits. */
function withSuffix(base: string, suffix: string, maxLength: number): string {
  const room = maxLength - suffix.length - 1;
  return `${base.length > room ? base.slice(0, room) : base}_${suffix}`;
}

/**
 * Hands out unique names within one namespace (the tables of a schema, or the columns of a
 * table). When a name is already taken, the later claimant gets the hash of its own upstream id
 * appended, which is stable for that object.
 */
export class NameAllocator {
  readonly #taken = new Set<string>();
  readonly #maxLength: number;

  constructor(maxLength: number, taken: Iterable<string> = []) {
    this.#maxLength = maxLength;
    for (const name of taken) this.#taken.add(name);
  }

  has(name: string): boolean {
    return this.#taken.has(name);
  }

  /** Marks a name as used (an object that keeps its current name). */
  claim(name: string): void {
    this.#taken.add(name);
  }

  /** A free name for `base`, disambiguated by `salt` (the object's upstream id) when needed. */
  allocate(base: string, salt: string): string {
    let name = fitName(base, this.#maxLength);
    for (let attempt = 0; this.#taken.has(name); attempt++) {
      name = withSuffix(base, hash8(attempt === 0 ? salt : `${salt}#${attempt}`), this.#maxLength);
    }
    this.#taken.add(name);
    return name;
  }
}

/**
 * Name of a database object that belongs to one field (its index, its foreign key): the catalog
 * prefix, which no table takes, the kind, and 16 hex characters of a hash of the field's
 * upstream ids, so the name survives renames and never collides with a table or view name.
 */
export function fieldObjectName(kind: string, tableId: string, fieldId: string): string {
  return `${CATALOG_PREFIX}${kind}_${createHash('sha256').update(`${tableId}\u0000${fieldId}`).digest('hex').slice(0, 16)}`;
}

/** Temporary names used while swapping names within one plan; the prefix is never handed out. */
export function temporaryName(index: number): string {
  return `${CATALOG_PREFIX}tmp_${index}`;
}

/**
 * Temporary name of a readable view whose table is renamed, while the plan's DDL runs: no table
 * or view the plan renames can take it, whatever names they swap.
 */
export function temporaryViewName(index: number): string {
  return `${CATALOG_PREFIX}tmp_view_${index}`;
}
