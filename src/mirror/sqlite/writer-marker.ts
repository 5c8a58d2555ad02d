import type { CatalogTableDef } from '../catalog-tables.ts';

/**
 * How SQLite tells the daemon's writes from everyone else's. It has no session variables: the
 * daemon inserts a row into this table at the start of each of its write transactions and deletes
 * it before commit, so only its own transaction ever sees one.
 */
export const WRITER_TABLE = '_wsmirror_writer';

export const WRITER_TABLE_DEF: CatalogTableDef = {
  name: WRITER_TABLE,
  comment: 'wsmirror: marks the daemon\'s own write transactions (always empty to others)',
  columns: [{ name: 'marker', kind: 'integer', notNull: true, comment: 'always 1' }],
  primaryKey: ['marker'],
};

/** True inside the daemon's own write transactions only. */
export const DAEMON_WRITE_CONDITION = `EXISTS (SELECT 1 FROM "${WRITER_TABLE}")`;
