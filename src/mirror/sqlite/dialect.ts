import { sql } from 'kysely';
import type { Dialect } from '../dialect.ts';
import { CATALOG_PREFIX } from '../naming.ts';
import { sqliteAppointments } from './appointment-text.ts';
import { createCaptureSql, dropCaptureSql, REPLACED_TABLE_DEF } from './capture-triggers.ts';
import { isDependantsRefusal } from './dependants-refusal.ts';
import { createViewSql, remakeViewSql } from './readable-views.ts';
import { DAEMON_WRITE_CONDITION, WRITER_TABLE_DEF } from './writer-marker.ts';

/** SQLite (better-sqlite3, WAL): a file. */
export const sqliteDialect: Dialect = {
  name: 'sqlite',
  // No length limit, but SQLite refuses user objects named sqlite_*.
  // SQLITE_MAX_COLUMN (2000 as better-sqlite3 and most builds have it) bounds a table and a result row.
  // A declared `rowid`, `oid` or `_rowid_` hides SQLite's own, which the mirror's tables reach as
  // `id` (their INTEGER PRIMARY KEY) anyway. But SQLite names a view's column `true` or `false`
  // `column1`, `column2`… whatever the view says (so that a name never reads as the boolean), and
  // the readable view would not show such a field under its column's name.
  naming: {
    maxLength: Number.POSITIVE_INFINITY, reservedTablePrefixes: [CATALOG_PREFIX, 'sqlite_'], reservedColumnNames: ['true', 'false'],
    maxTableColumns: 2000, maxViewColumns: 2000,
  },
  columnTypes: {
    number: 'REAL',
    boolean: 'INTEGER',
    date: 'TEXT',
    timestamp: 'TEXT',
    range: 'TEXT',
    json: 'TEXT',
    reference: 'INTEGER',
    text: 'TEXT',
  },
  appointments: sqliteAppointments,
  convertColumnSql: () => null,
  systemColumnTypes: { id: 'INTEGER', syncedAt: 'TEXT' },
  catalogColumnTypes: {
    text: 'TEXT', integer: 'INTEGER', bigint: 'INTEGER', boolean: 'INTEGER', json: 'TEXT', timestamp: 'TEXT', serial: 'INTEGER',
  },
  serialPrimaryKey: 'PRIMARY KEY AUTOINCREMENT',
  // ISO-8601 UTC text, as the mirror writes every timestamp.
  nowSql: `(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`,
  extraCatalogTables: [WRITER_TABLE_DEF, REPLACED_TABLE_DEF],
  daemonWriteCondition: () => DAEMON_WRITE_CONDITION,
  idIn: (column, ids) => sql<boolean>`${column} IN (SELECT "value" FROM json_each(${JSON.stringify(ids)}))`,
  booleanToSql: (value) => (value ? 1 : 0),
  calendarToSql: (text) => text,
  jsonArrivesParsed: false,
  dropCaptureSql,
  createCaptureSql,
  viewTypes: { list: 'TEXT', bound: 'TEXT', range: null },
  viewSetupSql: () => [],
  foreignKeySql: () => null,
  createViewSql,
  rebindViewSql: () => [],
  remakeViewSql,
  refusedForDependants: isDependantsRefusal,
  async open(location, options) {
    if (location.dialect !== 'sqlite') throw new Error(`not a SQLite location: ${location.display}`);
    const { openSqliteDriver } = await import('./connection.ts');
    return openSqliteDriver(sqliteDialect, location, options);
  },
  async takeSyncLock(location, options) {
    if (location.dialect !== 'sqlite') throw new Error(`not a SQLite location: ${location.display}`);
    if (location.path === ':memory:') return { confirm: () => true, release: () => {} };
    const { takeSqliteSyncLock } = await import('./sync-lock.ts');
    return takeSqliteSyncLock(location, options.logger);
  },
  async creationProblems(location) {
    if (location.dialect !== 'sqlite') throw new Error(`not a SQLite location: ${location.display}`);
    const { creationProblems } = await import('./access-problems.ts');
    return creationProblems(location.path);
  },
};
