import Database from 'better-sqlite3';

/**
 * Rewrites the stored CREATE TABLE text of a SQLite table, by SQLite's own procedure for changes
 * that leave the stored rows valid (lang_altertable.html, "Making Other Kinds Of Table Schema
 * Changes"): tests use it to make a mirror look as an older wsmirror left it.
 */
export async function rewriteSqliteTable(url: string, table: string, change: (ddl: string) => string): Promise<void> {
  const db = new Database(url.replace(/^sqlite:/, ''));
  try {
    db.unsafeMode(true);
    db.transaction(() => {
      const version = db.pragma('schema_version', { simple: true }) as number;
      const { sql } = db.prepare(`SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?`).get(table) as { sql: string };
      const changed = change(sql);
      if (changed === sql) throw new Error(`rewriteSqliteTable: the change left ${table} as it was`);
      db.pragma('writable_schema = ON');
      db.prepare(`UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = ?`).run(changed, table);
      db.pragma(`schema_version = ${version + 1}`);
      db.pragma('writable_schema = OFF');
    })();
  } finally {
    db.close();
  }
}
