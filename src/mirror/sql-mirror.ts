import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { ApiRecord } from '../api/records.ts';
import type { FieldType } from '../api/field-types.ts';
import type { Catalog, CatalogDb, Labels, MirrorField, MirrorTable, OutboxStatus, TableMode, TableState } from './catalog.ts';
import { CATALOG_PREFIX, ID_COLUMN, SYNCED_AT_COLUMN } from './naming.ts';
import { fieldsOf, tableCursorPrefix } from './catalog.ts';
import type { ColumnSpec, DialectDriver, WriteTx } from './dialect-driver.ts';
import { MirrorError, MirrorValueError } from './errors.ts';
import type { CursorWrites, Mirror, MirrorLogger, OutboxCount, RecordId, RowBatch, RowBatchResult } from './mirror.ts';
import type { SchemaOp, SchemaPlan } from './schema-planner.ts';
import { describeOp } from './schema-planner.ts';
import { SYSTEM_SQL_TYPES } from './type-map.ts';
import type { EncodeNotes, SqlValue } from './value-codec.ts';
import { apiToSql, sqlToApi, toRecordId } from './value-codec.ts';

interface TableInfo {
  table: MirrorTable;
  fields: MirrorField[];
}

const SYSTEM_COMMENTS = {
  [ID_COLUMN]: 'record id',
  [SYNCED_AT_COLUMN]: 'when wsmirror last wrote this row',
} as const;

/** The `Mirror` of both dialects; the driver supplies what differs between them. */
export class SqlMirror implements Mirror {
  readonly #driver: DialectDriver;
  readonly #logger: MirrorLogger | undefined;
  readonly displayUrl: string;
  #tables: Map<string, TableInfo> | undefined;
  #closed = false;

  private constructor(driver: DialectDriver, displayUrl: string, logger: MirrorLogger | undefined) {
    this.#driver = driver;
    this.displayUrl = displayUrl;
    this.#logger = logger;
  }

  static async open(driver: DialectDriver, displayUrl: string, logger?: MirrorLogger): Promise<SqlMirror> {
    return new SqlMirror(driver, displayUrl, logger);
  }

  get preferredBatchRows(): number {
    return this.#driver.preferredBatchRows;
  }

  get dialect() {
    return this.#driver.dialect;
  }

  // ---- catalog ---------------------------------------------------------------------------------

  async readCatalog(): Promise<Catalog> {
    this.#assertOpen();
    const d = this.#driver;
    const cat = d.catalog(d.db);
    const revision = await readRevision(cat);
    const tableRows = await cat.selectFrom('_wsmirror_tables').selectAll().orderBy('table_id').execute();
    const fieldRows = await cat.selectFrom('_wsmirror_fields').selectAll().orderBy('table_id').orderBy('position').execute();
    const tables: MirrorTable[] = tableRows.map((r) => ({
      tableId: r.table_id,
      moduleId: r.module_id,
      moduleName: r.module_name,
      moduleLabel: r.module_label,
      tableName: r.table_name,
      label: r.label,
      labels: (d.fromJson(r.labels) ?? {}) as Labels,
      sqlName: r.sql_name,
      hasHistory: d.fromBool(r.has_history),
      mode: r.mode as TableMode,
      state: r.state as TableState,
      lastPullAt: d.fromTimestamp(r.last_pull_at),
    }));
    const fields: MirrorField[] = fieldRows.map((r) => ({
      tableId: r.table_id,
      fieldId: r.field_id,
      fieldName: r.field_name,
      fieldType: r.field_type as FieldType,
      label: r.label,
      labels: (d.fromJson(r.labels) ?? {}) as Labels,
      columnName: r.column_name,
      sqlType: r.sql_type,
      position: Number(r.position),
      readOnly: d.fromBool(r.is_read_only),
      refTableId: r.ref_table_id,
      syncedFrom: r.synced_from,
      options: (d.fromJson(r.options) ?? null) as MirrorField['options'],
    }));
    const own = new Set(tables.map((t) => t.sqlName));
    const foreignNames = (await d.listNamespaceNames()).filter((n) => !own.has(n) && !n.startsWith(CATALOG_PREFIX)).sort();
    this.#tables = new Map(tables.map((t) => [t.tableId, { table: t, fields: fieldsOf({ fields }, t.tableId) }]));
    return { dialect: d.dialect, revision, tables, fields, foreignNames };
  }

  async applySchemaPlan(plan: SchemaPlan, options: { cursors?: CursorWrites } = {}): Promise<void> {
    this.#assertOpen();
    if (plan.dialect !== this.dialect) {
      throw new MirrorError(`a schema plan for ${plan.dialect} cannot be applied to a ${this.dialect} mirror`);
    }
    try {
      await this.#driver.write(async (tx) => {
        const cat = this.#driver.catalog(tx.db);
        const revision = await readRevision(cat);
        if (revision !== plan.baseRevision) {
          throw new MirrorError(
            `the schema plan was made from catalog revision ${plan.baseRevision} but the mirror is at ${revision}; plan again`,
          );
        }
        for (const op of plan.ops) {
          this.#logger?.info({ op: op.op }, describeOp(op));
          await this.#applyOp(tx, op);
        }
        if (plan.ops.length > 0) {
          await cat.updateTable('_wsmirror_meta').set({ value: String(revision + 1) }).where('key', '=', 'revision').execute();
        }
        await this.#writeCursors(tx, options.cursors);
      });
    } finally {
      // Reloaded on next use, whatever the outcome.
      this.#tables = undefined;
    }
  }

  async #applyOp(tx: WriteTx, op: SchemaOp): Promise<void> {
    await this.#runOp(tx, op);
    const columnOf = op.op === 'renameColumn' ? op.tableId
      : op.op === 'addColumn' || op.op === 'dropColumn' || op.op === 'retypeColumn' ? op.field.tableId : undefined;
    if (columnOf !== undefined) {
      await this.#driver.catalog(tx.db).updateTable('_wsmirror_tables')
        .set({ schema_changed_at: new Date().toISOString() }).where('table_id', '=', columnOf).execute();
    }
  }

  async #runOp(tx: WriteTx, op: SchemaOp): Promise<void> {
    const d = this.#driver;
    const cat = d.catalog(tx.db);
    switch (op.op) {
      case 'createTable': {
        const types = SYSTEM_SQL_TYPES[d.dialect];
        const columns = [
          sql`${sql.id(ID_COLUMN)} ${sql.raw(types.id)} PRIMARY KEY`,
          sql`${sql.id(SYNCED_AT_COLUMN)} ${sql.raw(types.syncedAt)} NOT NULL`,
          ...op.fields.map((f) => sql`${sql.id(f.columnName)} ${sql.raw(f.sqlType)}`),
        ];
        await sql`CREATE TABLE ${d.table(op.table.sqlName)} (${sql.join(columns)})`.execute(tx.db);
        await d.comment(tx, op.table.sqlName, null, op.table.label);
        for (const [column, text] of Object.entries(SYSTEM_COMMENTS)) await d.comment(tx, op.table.sqlName, column, text);
        await this.#insertTableRow(tx, op.table);
        for (const f of op.fields) {
          await d.comment(tx, op.table.sqlName, f.columnName, f.label);
          await this.#writeFieldRows(tx, op.table.sqlName, f);
        }
        return;
      }
      case 'dropTable': {
        await sql`DROP TABLE IF EXISTS ${d.table(op.table.sqlName)}`.execute(tx.db);
        const id = op.table.tableId;
        await cat.deleteFrom('_wsmirror_tables').where('table_id', '=', id).execute();
        await cat.deleteFrom('_wsmirror_fields').where('table_id', '=', id).execute();
        await cat.deleteFrom('_wsmirror_choice_options').where('table_id', '=', id).execute();
        const prefix = tableCursorPrefix(id);
        // substr, not LIKE: ids may hold LIKE wildcards.
        await cat.deleteFrom('_wsmirror_cursors')
          .where(sql<boolean>`substr(${sql.ref('name')}, 1, ${prefix.length}) = ${prefix}`)
          .execute();
        return;
      }
      case 'renameTable':
        await sql`ALTER TABLE ${d.table(op.from)} RENAME TO ${sql.id(op.to)}`.execute(tx.db);
        return;
      case 'updateTable': {
        const t = op.table;
        await cat.updateTable('_wsmirror_tables').set(this.#tableRow(t)).where('table_id', '=', t.tableId).execute();
        await cat.updateTable('_wsmirror_choice_options').set({ sql_table: t.sqlName }).where('table_id', '=', t.tableId).execute();
        await d.comment(tx, t.sqlName, null, t.label);
        return;
      }
      case 'addColumn':
        await sql`ALTER TABLE ${d.table(op.sqlTable)} ADD COLUMN ${sql.id(op.field.columnName)} ${sql.raw(op.field.sqlType)}`.execute(tx.db);
        await d.comment(tx, op.sqlTable, op.field.columnName, op.field.label);
        await this.#writeFieldRows(tx, op.sqlTable, op.field);
        return;
      case 'dropColumn':
        await sql`ALTER TABLE ${d.table(op.sqlTable)} DROP COLUMN ${sql.id(op.field.columnName)}`.execute(tx.db);
        await this.#deleteFieldRows(tx, op.field.tableId, op.field.fieldId);
        return;
      case 'renameColumn':
        await sql`ALTER TABLE ${d.table(op.sqlTable)} RENAME COLUMN ${sql.id(op.from)} TO ${sql.id(op.to)}`.execute(tx.db);
        return;
      case 'retypeColumn':
        if (op.rebuild) {
          // Old values would be wrong for the new type: drop them; the table is re-read.
          await sql`ALTER TABLE ${d.table(op.sqlTable)} DROP COLUMN ${sql.id(op.field.columnName)}`.execute(tx.db);
          await sql`ALTER TABLE ${d.table(op.sqlTable)} ADD COLUMN ${sql.id(op.field.columnName)} ${sql.raw(op.field.sqlType)}`.execute(tx.db);
        }
        await d.comment(tx, op.sqlTable, op.field.columnName, op.field.label);
        await this.#writeFieldRows(tx, op.sqlTable, op.field);
        return;
      case 'updateField':
        await d.comment(tx, op.sqlTable, op.field.columnName, op.field.label);
        await this.#writeFieldRows(tx, op.sqlTable, op.field);
        return;
    }
  }

  async #insertTableRow(tx: WriteTx, t: MirrorTable): Promise<void> {
    await this.#driver.catalog(tx.db).insertInto('_wsmirror_tables')
      .values({ table_id: t.tableId, last_pull_at: t.lastPullAt, ...this.#tableRow(t) })
      .execute();
  }

  /** A table's catalog row as a schema change writes it (`last_pull_at` belongs to the pull). */
  #tableRow(t: MirrorTable) {
    return {
      module_id: t.moduleId,
      module_name: t.moduleName,
      module_label: t.moduleLabel,
      table_name: t.tableName,
      label: t.label,
      labels: JSON.stringify(t.labels),
      sql_name: t.sqlName,
      has_history: this.#driver.toBool(t.hasHistory),
      mode: t.mode,
      state: t.state,
      schema_changed_at: new Date().toISOString(),
    };
  }

  async #deleteFieldRows(tx: WriteTx, tableId: string, fieldId: string): Promise<void> {
    const cat = this.#driver.catalog(tx.db);
    await cat.deleteFrom('_wsmirror_fields').where('table_id', '=', tableId).where('field_id', '=', fieldId).execute();
    await cat.deleteFrom('_wsmirror_choice_options').where('table_id', '=', tableId).where('field_id', '=', fieldId).execute();
  }

  /** The field's catalog row and its choice options, replacing what was there. */
  async #writeFieldRows(tx: WriteTx, sqlTable: string, f: MirrorField): Promise<void> {
    const d = this.#driver;
    const cat = d.catalog(tx.db);
    await this.#deleteFieldRows(tx, f.tableId, f.fieldId);
    await cat.insertInto('_wsmirror_fields').values({
      table_id: f.tableId,
      field_id: f.fieldId,
      field_name: f.fieldName,
      field_type: f.fieldType,
      label: f.label,
      labels: JSON.stringify(f.labels),
      column_name: f.columnName,
      sql_type: f.sqlType,
      position: f.position,
      is_read_only: d.toBool(f.readOnly),
      ref_table_id: f.refTableId,
      synced_from: f.syncedFrom,
      options: f.options === null ? null : JSON.stringify(f.options),
    }).execute();
    if (Array.isArray(f.options) && f.options.length > 0) {
      const seen = new Set<string>();
      const rows = f.options.filter((o) => !seen.has(o.id) && seen.add(o.id)).map((o) => ({
        table_id: f.tableId,
        field_id: f.fieldId,
        sql_table: sqlTable,
        column_name: f.columnName,
        option_id: o.id,
        name: o.name,
        label: pickOptionLabel(o.labels, o.name),
        labels: JSON.stringify(o.labels ?? {}),
        option_order: o.order,
        color: o.color ?? null,
        text_color: o.textColor ?? null,
        icon: o.icon ?? null,
      }));
      await cat.insertInto('_wsmirror_choice_options').values(rows).execute();
    }
  }

  // ---- rows ------------------------------------------------------------------------------------

  async applyRows(tableId: string, batch: RowBatch): Promise<RowBatchResult> {
    const { table, fields } = await this.#table(tableId);
    const dialect = this.dialect;
    const types = SYSTEM_SQL_TYPES[dialect];
    const columns: ColumnSpec[] = [
      { name: ID_COLUMN, sqlType: types.id },
      { name: SYNCED_AT_COLUMN, sqlType: types.syncedAt },
      ...fields.map((f) => ({ name: f.columnName, sqlType: f.sqlType })),
    ];
    const syncedAt = new Date().toISOString();

    // Encode before opening the transaction: a bad value fails the batch without holding locks.
    const rows = new Map<number, SqlValue[]>();
    const notes: EncodeNotes = { replacedText: false };
    for (const record of batch.upserts ?? []) {
      const id = recordId(record.id, table.sqlName);
      const row: SqlValue[] = [id, syncedAt];
      for (const f of fields) {
        const value = Object.hasOwn(record.values, f.fieldName) ? record.values[f.fieldName] : null;
        try {
          row.push(apiToSql(f.fieldType, value, dialect, notes));
        } catch (error) {
          throw new MirrorValueError(`${table.sqlName} record ${id}, field ${f.fieldName}: ${(error as Error).message}`, { cause: error });
        }
        if (notes.replacedText) {
          notes.replacedText = false;
          this.#logger?.warn({ table: table.sqlName, record: id, field: f.fieldName },
            'text with NUL or unpaired surrogates stored with U+FFFD in their place');
        }
      }
      rows.set(id, row);
    }
    const deletes = [...new Set((batch.deletes ?? []).map((id) => recordId(id, table.sqlName)))];

    const result = await this.#driver.write(async (tx) => {
      const deleted = deletes.length > 0 ? await this.#driver.deleteRows(tx, table.sqlName, deletes) : 0;
      if (rows.size > 0) await this.#driver.upsertRows(tx, table.sqlName, columns, [...rows.values()]);
      await this.#writeCursors(tx, batch.cursors);
      if (batch.state !== undefined) await this.#updateTableState(tx, tableId, { state: batch.state });
      return { upserted: rows.size, deleted };
    });
    this.#logger?.debug({ table: table.sqlName, ...result }, 'rows applied');
    return result;
  }

  async *streamIds(tableId: string, options: { after?: number; pageSize?: number } = {}): AsyncIterable<number> {
    const pageSize = Math.max(1, Math.floor(options.pageSize ?? 10_000));
    let last = options.after ?? 0;
    for (;;) {
      // Each page is its own short query (keyset paging): no long-lived read transaction.
      const { table } = await this.#table(tableId);
      const { rows } = await sql<{ id: number | bigint }>`SELECT ${sql.id(ID_COLUMN)} FROM ${this.#driver.table(table.sqlName)}
        WHERE ${sql.id(ID_COLUMN)} > ${last} ORDER BY ${sql.id(ID_COLUMN)} LIMIT ${pageSize}`.execute(this.#driver.db);
      for (const r of rows) yield Number(r.id);
      if (rows.length < pageSize) return;
      last = Number(rows[rows.length - 1]!.id);
    }
  }

  async countRows(tableId: string): Promise<number> {
    const { table } = await this.#table(tableId);
    const { rows } = await sql<{ n: number | bigint | string }>`SELECT count(*) AS ${sql.id('n')} FROM ${this.#driver.table(table.sqlName)}`
      .execute(this.#driver.db);
    return Number(rows[0]?.n ?? 0);
  }

  async readRows(tableId: string, ids: readonly RecordId[]): Promise<ApiRecord[]> {
    const { table, fields } = await this.#table(tableId);
    const wanted = [...new Set(ids.map((id) => recordId(id, table.sqlName)))].sort((a, b) => a - b);
    const out: ApiRecord[] = [];
    for (let i = 0; i < wanted.length; i += 500) {
      const chunk = wanted.slice(i, i + 500);
      // Positional aliases: a column called `__proto__` would not survive as a row object key.
      const selected = [sql`${sql.id(ID_COLUMN)} AS ${sql.id('c0')}`, ...fields.map((f, j) => sql`${sql.id(f.columnName)} AS ${sql.id(`c${j + 1}`)}`)];
      const { rows } = await sql<Record<string, unknown>>`SELECT ${sql.join(selected)} FROM ${this.#driver.table(table.sqlName)}
        WHERE ${sql.id(ID_COLUMN)} IN (${sql.join(chunk)}) ORDER BY ${sql.id(ID_COLUMN)}`.execute(this.#driver.db);
      for (const row of rows) {
        const values = Object.fromEntries(fields.map((f, j) => [f.fieldName, sqlToApi(f.fieldType, row[`c${j + 1}`], this.dialect)]));
        out.push({ id: String(row['c0']), values });
      }
    }
    return out;
  }

  // ---- cursors and state -----------------------------------------------------------------------

  async getCursor(key: string): Promise<string | undefined> {
    this.#assertOpen();
    const row = await this.#driver.catalog(this.#driver.db).selectFrom('_wsmirror_cursors').select('value')
      .where('name', '=', key).executeTakeFirst();
    return row?.value;
  }

  async setCursor(key: string, value: string | null): Promise<void> {
    this.#assertOpen();
    await this.#driver.write((tx) => this.#writeCursors(tx, { [key]: value }));
  }

  async outboxSummary(): Promise<OutboxCount[]> {
    this.#assertOpen();
    const rows = await this.#driver.catalog(this.#driver.db).selectFrom('_wsmirror_outbox')
      .select((eb) => ['table_id', 'status', eb.fn.countAll().as('n')])
      .groupBy(['table_id', 'status'])
      .orderBy('table_id').orderBy('status')
      .execute();
    // count(*) is a bigint on Postgres: a string or number depending on the driver's parser.
    return rows.map((r) => ({ tableId: r.table_id, status: r.status as OutboxStatus, count: Number(r.n) }));
  }

  async setTableState(tableId: string, patch: { state?: TableState; lastPullAt?: string | null }): Promise<void> {
    await this.#table(tableId);
    await this.#driver.write((tx) => this.#updateTableState(tx, tableId, patch));
  }

  async #updateTableState(tx: WriteTx, tableId: string, patch: { state?: TableState; lastPullAt?: string | null }): Promise<void> {
    const set: { state?: string; last_pull_at?: string | null } = {};
    if (patch.state !== undefined) set.state = patch.state;
    if (patch.lastPullAt !== undefined) set.last_pull_at = patch.lastPullAt;
    if (Object.keys(set).length === 0) return;
    await this.#driver.catalog(tx.db).updateTable('_wsmirror_tables').set(set).where('table_id', '=', tableId).execute();
    this.#tables = undefined;
  }

  async #writeCursors(tx: WriteTx, cursors: CursorWrites | undefined): Promise<void> {
    if (!cursors) return;
    const cat = this.#driver.catalog(tx.db);
    const now = new Date().toISOString();
    for (const [name, value] of Object.entries(cursors)) {
      if (value === null) {
        await cat.deleteFrom('_wsmirror_cursors').where('name', '=', name).execute();
      } else {
        await cat.insertInto('_wsmirror_cursors').values({ name, value, updated_at: now })
          .onConflict((oc) => oc.column('name').doUpdateSet({ value, updated_at: now }))
          .execute();
      }
    }
  }

  // ---- lifecycle -------------------------------------------------------------------------------

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#driver.close();
  }

  #assertOpen(): void {
    if (this.#closed) throw new MirrorError('the mirror is closed');
  }

  async #table(tableId: string): Promise<TableInfo> {
    this.#assertOpen();
    if (!this.#tables) await this.readCatalog();
    const info = this.#tables!.get(tableId);
    if (!info) throw new MirrorError(`table ${tableId} is not mirrored (not in the catalog)`);
    return info;
  }
}

async function readRevision(cat: Kysely<CatalogDb>): Promise<number> {
  const row = await cat.selectFrom('_wsmirror_meta').select('value').where('key', '=', 'revision').executeTakeFirst();
  return Number(row?.value ?? 0);
}

function recordId(value: RecordId, sqlTable: string): number {
  const id = toRecordId(value);
  if (id === undefined) throw new MirrorValueError(`${sqlTable}: ${JSON.stringify(value)} is not a record id (a positive integer)`);
  return id;
}

function pickOptionLabel(labels: Labels | undefined, name: string): string {
  if (!labels) return name;
  return labels[''] || labels['en'] || name;
}
