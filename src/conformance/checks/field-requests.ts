import type { CheckContext } from '../check.ts';
import { expectOk } from '../expectations.ts';

/** Requests every field check makes: the path of one field, and the names a table's field list holds. */

export function fieldParams(tableName: string, fieldName: string) {
  return { params: { tableName, fieldName } };
}

export async function fieldNames(ctx: CheckContext, tableName: string): Promise<string[]> {
  const res = await ctx.send('listFields', { params: { tableName } });
  return expectOk(res, 'GET fields succeeds').data.map((f) => f.name);
}
