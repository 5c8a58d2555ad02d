import type { ForeignKey } from '../dialect.ts';
import type { WriteTx } from '../dialect-driver.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { fieldObjectName } from '../naming.ts';
import { readCatalogTables } from './read-catalog.ts';

/**
 * Foreign keys that document references for BI tools (which draw relationships from them) where
 * the database can declare one without enforcing it: PostgreSQL 18's `NOT ENFORCED`. An enforced
 * key, even `NOT VALID`, would refuse the mirror's own writes: records arrive table by table, a
 * record can reference one deleted upstream, local inserts carry temporary ids. Like the views,
 * the keys are dropped before a schema change and declared again after it, from the catalog.
 */
/** The keys of the tables of `only` and those pointing at them (every key when undefined). */
async function foreignKeys(ctx: MirrorContext, tx: WriteTx, only: ReadonlySet<string> | undefined, absent: ReadonlySet<string>): Promise<ForeignKey[]> {
  const { tables, fields } = await readCatalogTables(ctx.driver, ctx.driver.catalog(tx.db));
  // No key from or to a table whose SQL table is missing.
  const sqlNameOf = new Map(tables.filter((t) => !absent.has(t.tableId)).map((t) => [t.tableId, t.sqlName]));
  const out: ForeignKey[] = [];
  for (const f of fields) {
    const refSqlTable = f.fieldType === 'reference' && f.refTableId !== null ? sqlNameOf.get(f.refTableId) : undefined;
    const sqlTable = sqlNameOf.get(f.tableId);
    if (refSqlTable === undefined || sqlTable === undefined) continue;
    if (only !== undefined && !only.has(f.tableId) && !only.has(f.refTableId!)) continue;
    out.push({ name: fieldObjectName('fk', f.tableId, f.fieldId), sqlTable, column: f.columnName, refSqlTable });
  }
  return out;
}

export async function dropForeignKeys(ctx: MirrorContext, tx: WriteTx, only?: ReadonlySet<string>): Promise<void> {
  await run(ctx, tx, 'drop', only);
}

/** `absent`: tables whose SQL table is missing. */
export async function createForeignKeys(ctx: MirrorContext, tx: WriteTx, only?: ReadonlySet<string>, absent: ReadonlySet<string> = new Set()): Promise<void> {
  await run(ctx, tx, 'create', only, absent);
}

async function run(ctx: MirrorContext, tx: WriteTx, what: 'create' | 'drop', only: ReadonlySet<string> | undefined, absent: ReadonlySet<string> = new Set()): Promise<void> {
  if (!ctx.driver.informationalForeignKeys) return;
  const keys = await foreignKeys(ctx, tx, only, absent);
  await ctx.driver.runScript(tx, keys.flatMap((fk) => {
    const statements = ctx.dialect.foreignKeySql(ctx.driver.names, fk);
    return statements === null ? [] : [statements[what]];
  }));
}
