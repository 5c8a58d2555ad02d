import type { MirrorField } from '../catalog.ts';
import type { ColumnSpec, RowSink } from '../dialect-driver.ts';
import { MirrorError, MirrorValueError } from '../errors.ts';
import type { EncodedRows, RowBatch } from '../mirror.ts';
import type { MirrorContext, TableInfo } from '../mirror-context.ts';
import { ID_COLUMN, SYNCED_AT_COLUMN } from '../naming.ts';
import { sqlEncoder, type EncodeNotes, type SqlEncoder } from '../value-codec.ts';
import { mirroredTable } from './read-catalog.ts';
import { requireRecordId } from './record-ids.ts';

/**
 * Rows of one table encoded for its columns as the catalog had them, in the driver's own form.
 * `layout` names the columns: rows are only written while the table still has exactly those.
 */
export class TableRows implements EncodedRows {
  readonly tableId: string;
  readonly columns: readonly ColumnSpec[];
  readonly layout: string;
  readonly sink: RowSink;
  readonly #fields: readonly MirrorField[];
  readonly #encoders: readonly SqlEncoder[];
  readonly #sqlTable: string;

  constructor(ctx: MirrorContext, info: TableInfo) {
    this.tableId = info.table.tableId;
    this.#sqlTable = info.table.sqlName;
    this.#fields = info.fields;
    this.columns = tableColumns(ctx, info);
    this.layout = layoutOf(this.columns);
    this.sink = ctx.driver.rowSink(this.columns);
    this.#encoders = info.fields.map((f) => sqlEncoder(f.fieldType, ctx.dialect.name));
  }

  get count(): number {
    return this.sink.ids.length;
  }

  get bytes(): number {
    return this.sink.bytes;
  }

  /**
   * Encodes records straight into the sink: each value goes from its API form to the driver's
   * form in one step, with no row object in between. A field missing from `values` is NULL.
   */
  add(ctx: MirrorContext, records: NonNullable<RowBatch['upserts']>, syncedAt: string): void {
    const { sink } = this;
    const fields = this.#fields;
    const encoders = this.#encoders;
    const notes: EncodeNotes = { replacedText: false };
    for (const record of records) {
      const id = requireRecordId(record.id, this.#sqlTable);
      const values = record.values;
      sink.beginRow(id);
      sink.value(id);
      sink.value(syncedAt);
      for (let i = 0; i < fields.length; i++) {
        const field = fields[i]!;
        const value = Object.hasOwn(values, field.fieldName) ? values[field.fieldName] : null;
        try {
          sink.value(encoders[i]!(value, notes));
        } catch (error) {
          throw new MirrorValueError(`${this.#sqlTable} record ${id}, field ${field.fieldName}: ${(error as Error).message}`, { cause: error });
        }
        if (notes.replacedText) {
          notes.replacedText = false;
          ctx.logger?.warn({ table: this.#sqlTable, record: id, field: field.fieldName },
            'text with NUL or unpaired surrogates stored with U+FFFD in their place');
        }
      }
      sink.endRow();
    }
  }
}

/** The columns every upsert of a table writes: `id`, `_synced_at`, then the fields in order. */
function tableColumns(ctx: MirrorContext, info: TableInfo): ColumnSpec[] {
  const types = ctx.dialect.systemColumnTypes;
  return [
    { name: ID_COLUMN, sqlType: types.id },
    { name: SYNCED_AT_COLUMN, sqlType: types.syncedAt },
    ...info.fields.map((f) => ({ name: f.columnName, sqlType: f.sqlType })),
  ];
}

function layoutOf(columns: readonly ColumnSpec[]): string {
  return JSON.stringify(columns.map((c) => [c.name, c.sqlType]));
}

/**
 * Encodes records of a table for a later `applyRows`, into `into` when given. Values are checked
 * here: a value its field cannot store fails with MirrorValueError before any transaction.
 */
export async function encodeRows(
  ctx: MirrorContext, tableId: string, records: NonNullable<RowBatch['upserts']>, into?: EncodedRows,
): Promise<TableRows> {
  const rows = into === undefined ? new TableRows(ctx, await mirroredTable(ctx, tableId)) : tableRowsOf(into, tableId);
  rows.add(ctx, records, new Date().toISOString());
  return rows;
}

/** `encoded` as rows of this mirror for `tableId`; MirrorError for anything else. */
export function tableRowsOf(encoded: EncodedRows, tableId: string): TableRows {
  if (!(encoded instanceof TableRows) || encoded.tableId !== tableId) {
    throw new MirrorError(`the encoded rows are not rows of table ${tableId} from this mirror`);
  }
  return encoded;
}

/** Refuses rows encoded for columns the table no longer has (its schema changed in between). */
export function checkLayout(ctx: MirrorContext, info: TableInfo, rows: TableRows): void {
  if (rows.layout !== layoutOf(tableColumns(ctx, info))) {
    throw new MirrorError(`${info.table.sqlName}: its columns changed since these rows were encoded; read them again`);
  }
}
