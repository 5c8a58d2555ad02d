/**
 * SQL text for statements that cannot take bind parameters (trigger bodies, DDL): identifiers in
 * double quotes and string literals in single quotes, each with its quote doubled. Both dialects
 * read them the same way (Postgres runs with standard_conforming_strings on).
 */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function quoteLiteral(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** How statements name the mirror's tables and functions: quoted, schema-qualified where needed. */
export interface SqlNames {
  qualify(name: string): string;
}

/** A mirrored table as its capture triggers see it. */
export interface CaptureTable {
  tableId: string;
  sqlName: string;
  fields: readonly { fieldId: string; columnName: string; readOnly: boolean }[];
}

/** The message a write to a read-only column fails with (both dialects): `%s` column, then table. */
export const READ_ONLY_TEMPLATE = 'wsmirror: column %s of %s is read-only (computed upstream); it cannot be written';

export function readOnlyMessage(sqlTable: string, column: string): string {
  const [before, middle, after] = READ_ONLY_TEMPLATE.split('%s') as [string, string, string];
  return `${before}${column}${middle}${sqlTable}${after}`;
}

/**
 * The key of the object a SQLite capture writes for a BLOB, which JSON cannot hold (`{"wsmirror:blob": "<hex>"}`):
 * the push refuses it, naming the column.
 */
export const CAPTURED_BLOB_KEY = 'wsmirror:blob';

export const ID_CHANGE_MESSAGE = 'wsmirror: the id of a mirrored row cannot be changed';
