import type { Field } from '../api/field.ts';
import type { ApiRecord } from '../api/records.ts';
import { MissingFieldValueError, TableSchemaMovedError, UpstreamError } from '../errors.ts';
import { MirrorValueError } from '../mirror/errors.ts';
import { tableLabel, type PulledTable, type SyncContext } from './sync-context.ts';

/**
 * A record pull checks what it reads against the field list it took from the catalog when it
 * began. Upstream's schema may change under a pull (a field added, renamed, deleted or retyped, the
 * table deleted), and the pages read after the change then disagree with that list: a record
 * without a value for a field deleted since, one with a key for a field added since, a value its
 * old column cannot hold, a table that answers 404, a change feed refused (400) since the table
 * has no history any more. Such a disagreement is no fault of upstream's
 * answer, and writing the page would be wrong (a renamed field's values would be written as
 * NULL, an added field's changes consumed before the mirror has its column). So on each one the
 * table is read again from upstream (`GET …/tables/{name}`): when its fields are no longer the
 * pull's, the pull ends with TableSchemaMovedError, having written only what it read before, and
 * the engine pulls the schema again before it reads the table again. When they are still the
 * pull's, the answer is at fault and the pull fails as before: a record missing a field upstream
 * still has is refused (a missing key is not a null).
 */

/** Why upstream's table is no longer the one the pull reads; undefined when it still is (or cannot tell). */
async function schemaMove(ctx: SyncContext, table: PulledTable, cause?: unknown): Promise<TableSchemaMovedError | undefined> {
  const label = tableLabel(table);
  const options = cause === undefined ? {} : { cause };
  let served;
  try {
    served = await ctx.client.getTable(table.moduleName, table.tableName);
  } catch (error) {
    if (error instanceof UpstreamError && error.status === 404) {
      return new TableSchemaMovedError(`${label}: upstream no longer serves the table under its name`, options);
    }
    throw error;
  }
  if (served.id !== table.tableId) {
    return new TableSchemaMovedError(`${label}: upstream serves another table under its name`, options);
  }
  // A pull polls the changes of a table with history; one without has none (400).
  if (served.hasHistory !== undefined && served.hasHistory !== table.hasHistory) {
    return new TableSchemaMovedError(`${label}: upstream turned its history ${table.hasHistory ? 'off' : 'on'}`, options);
  }
  // Without its field list the answer says nothing about the fields.
  if (!served.fields) return undefined;
  const changed = changedFields(served.fields, table);
  return changed.length === 0 ? undefined : new TableSchemaMovedError(`${label}: its fields changed upstream during the pull (${changed.join(', ')})`, options);
}

/** The fields upstream added, deleted, renamed or retyped since the pull's list, by name. */
function changedFields(upstream: readonly Field[], table: PulledTable): string[] {
  const pulled = new Map(table.fields.map((f) => [f.fieldId, f]));
  const changed: string[] = [];
  for (const field of upstream) {
    const known = pulled.get(field.id);
    pulled.delete(field.id);
    if (!known) changed.push(`${field.name} added`);
    else if (known.fieldName !== field.name) changed.push(`${known.fieldName} renamed to ${field.name}`);
    else if (known.fieldType !== field.type) changed.push(`${field.name} retyped from ${known.fieldType} to ${field.type}`);
  }
  for (const gone of pulled.values()) changed.push(`${gone.fieldName} deleted`);
  return changed;
}

/** Failures of a pull that a schema change under it would cause. */
function mayBeSchemaMove(error: unknown): boolean {
  return error instanceof MissingFieldValueError
    || error instanceof MirrorValueError
    || (error instanceof UpstreamError && (error.status === 404 || error.status === 400));
}

/**
 * What a failed pull of `table` reports: TableSchemaMovedError when the failure is one a schema
 * change causes and upstream's table is no longer the pull's; `error` itself otherwise (and when
 * the table cannot be read again).
 */
export async function schemaMovedOr(ctx: SyncContext, table: PulledTable, error: unknown): Promise<unknown> {
  if (!mayBeSchemaMove(error) || ctx.signal?.aborted) return error;
  try {
    return (await schemaMove(ctx, table, error)) ?? error;
  } catch {
    return error;
  }
}

/**
 * Checks the records a pull reads for keys that are none of its fields, before they are
 * written. One that upstream now lists as a field of the table means a field was added since the
 * pull began: the pull ends (TableSchemaMovedError) so that the record is read again once the
 * mirror has the column. A key upstream does not list is not a field of the table, and is left
 * out as before. The pager has already checked that every record holds each of the pull's fields.
 */
export class RecordKeyCheck {
  readonly #ctx: SyncContext;
  readonly #table: PulledTable;
  readonly #fields: ReadonlySet<string>;
  /** Keys upstream answered although its table does not list them as fields. */
  readonly #notFields = new Set<string>();

  constructor(ctx: SyncContext, table: PulledTable) {
    this.#ctx = ctx;
    this.#table = table;
    this.#fields = new Set(table.fieldNames);
  }

  async check(records: readonly ApiRecord[]): Promise<void> {
    for (const record of records) {
      const keys = Object.keys(record.values);
      // The pager saw each of the pull's fields in the record: no more keys, no other key.
      if (keys.length <= this.#fields.size) continue;
      const unknown = keys.filter((k) => !this.#fields.has(k) && !this.#notFields.has(k));
      if (unknown.length === 0) continue;
      const moved = await schemaMove(this.#ctx, this.#table);
      if (moved) throw moved;
      for (const key of unknown) this.#notFields.add(key);
      this.#ctx.logger.debug({ table: tableLabel(this.#table), keys: unknown }, 'records carry keys that are no fields of the table; left out');
    }
  }
}
