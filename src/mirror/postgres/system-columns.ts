/**
 * The system columns Postgres gives every table (`pg_attribute` rows with a negative `attnum`):
 * a table cannot have a column of the same name ("column name … conflicts with a system column
 * name"), so a field of that name gets another column name (naming.ts). The same six from
 * PostgreSQL 12 on; `oid` was one only in a table made `WITH OIDS`, which no mirrored table is
 * and PostgreSQL 12 dropped, so it is an ordinary name.
 */
export const POSTGRES_SYSTEM_COLUMNS: readonly string[] = ['tableoid', 'cmax', 'xmax', 'cmin', 'xmin', 'ctid'];
