import type { WriteTx } from '../dialect.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { captureTables, createCapture, dropCapture } from './capture.ts';
import { refreshFieldTables } from './field-tables.ts';
import { createForeignKeys, dropForeignKeys } from './foreign-keys.ts';
import { createViews, dropViews } from './readable-views.ts';

/**
 * The objects the mirror derives from its mirrored tables and their catalog rows: the capture
 * triggers (capture.ts), the readable views (readable-views.ts) and the informational foreign
 * keys (foreign-keys.ts). They name tables and columns, and the databases refuse DDL under them
 * (SQLite will not drop or rename a column a trigger or view names, Postgres will not drop or
 * retype a column a view selects). So every DDL on mirrored tables runs between
 * `setAsideDerivedObjects` and `restoreDerivedObjects`, in one transaction: the objects come back
 * from the catalog as it then stands, and always match the tables.
 */

/** Drops them all, as the catalog names them before the DDL. */
export async function setAsideDerivedObjects(ctx: MirrorContext, tx: WriteTx): Promise<void> {
  await dropCapture(ctx, tx, await captureTables(ctx, tx));
  await dropViews(ctx, tx);
  await dropForeignKeys(ctx, tx);
}

/**
 * Makes them again from the catalog after the DDL. The fields' SQL tables are refreshed first:
 * a table renamed, created or dropped changes them for the fields of other tables too.
 */
export async function restoreDerivedObjects(ctx: MirrorContext, tx: WriteTx): Promise<void> {
  await refreshFieldTables(ctx, tx);
  await createViews(ctx, tx);
  await createForeignKeys(ctx, tx);
  await createCapture(ctx, tx, await captureTables(ctx, tx));
}
