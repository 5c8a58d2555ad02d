import { TableSchemaError } from '../errors.ts';
import type { MirrorContext } from '../mirror-context.ts';

/** The database refused DDL of `tableId`'s change: says whether objects of a user's are in its way (Dialect.refusedForDependants). */
export function schemaRefusal(ctx: MirrorContext, tableId: string, error: unknown): TableSchemaError {
  return new TableSchemaError(tableId, error, { dependants: ctx.dialect.refusedForDependants(error) });
}
