import type { CsvImportOptions } from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { CellFault, cellValue, isEmptyCell } from '../csv/cell-values.ts';
import { bindColumns, headerCells, type ColumnBinding } from '../csv/column-mapping.ts';
import type { CsvRecord } from '../csv/csv-reader.ts';
import { BadRequestError, ForbiddenError } from '../errors.ts';
import type { ApiKeyGrant } from '../options.ts';
import { requestBudget } from './expression-host.ts';
import type { RecordPlace } from './record-checks.ts';
import { dynamicStatement } from './record-statements.ts';
import { RecordWriter, type RecordUpdate } from './record-store.ts';
import { INVALID, Issues, type ValueConverter } from './record-values.ts';
import type { FieldRow, TableRow } from './schema-rows.ts';
import { allowsRole, roleOf } from './table-roles.ts';

/**
 * The CSV import: the records of a file created or updated in one transaction, `batchSize`
 * rows at a time. Each batch goes through one RecordWriter (record-store.ts), made once for the
 * import, so an imported value meets exactly the checks of a JSON request (shapes, options,
 * required, unique, references) and is logged in record changes like any other write. The first
 * batch with a fault throws its 400 (up to 20 faults, each named by line and column), and the
 * transaction rolls back every batch before it.
 *
 * The file is read while the transaction is open, so the import holds the store gate
 * (store-gate.ts): other requests wait for its end.
 *
 * Counts: `rowsImported` records created, `rowsUpdated` records updated, `rowsSkipped` data rows
 * that wrote nothing: blank rows (every cell empty) and, in `update` mode, rows whose key matches
 * no record. The three add up to the data rows of the file.
 */

/**
 * An import is one request, but its rows are its own work: on top of a request's budget its
 * expressions (defaults, guards, triggers, selections) may spend this much per row, a few times
 * what reading and writing a row costs. A file of cheap expressions imports whole; costly ones
 * are stopped (400) before they hold the store much longer than the file's reading does.
 */
const EVALUATION_STEPS_PER_ROW = 100;
const EVALUATION_MS_PER_ROW = 0.05;

export interface ImportCounts {
  rowsImported: number;
  rowsUpdated: number;
  rowsSkipped: number;
}

interface Row {
  line: number;
  /** Request values of the non-empty cells, by field name. */
  values: Record<string, unknown>;
}

interface KeyedRow extends Row {
  /** Canonical key values, JSON-encoded, in key order. */
  key: string;
  keyValues: unknown[];
}

/**
 * Imports `records` into the table `table()` gives (looked up once the store is held, so a table
 * deleted meanwhile is a 404). `actor` is the key the request came with: guards and triggers see
 * it as for any other write.
 */
export function importRecords(
  ctx: EmulatorContext,
  table: () => TableRow,
  records: AsyncIterable<CsvRecord>,
  options: CsvImportOptions,
  actor: ApiKeyGrant,
): Promise<ImportCounts> {
  return ctx.gate.exclusive(async () => {
    const target = table();
    ctx.db.exec('BEGIN');
    try {
      const counts = await new RecordImport(ctx, target, ctx.schema.fieldsOf(target.key), options, actor).run(records);
      ctx.db.exec('COMMIT');
      return counts;
    } catch (error) {
      if (ctx.db.inTransaction) ctx.db.exec('ROLLBACK');
      throw error;
    }
  });
}

class RecordImport {
  readonly #ctx: EmulatorContext;
  readonly #table: TableRow;
  readonly #fields: readonly FieldRow[];
  readonly #options: CsvImportOptions;
  readonly #actor: ApiKeyGrant;
  readonly #writer: RecordWriter;
  readonly #counts: ImportCounts = { rowsImported: 0, rowsUpdated: 0, rowsSkipped: 0 };
  #bindings: ColumnBinding[] = [];
  #keys: { binding: ColumnBinding; converter: ValueConverter }[] = [];
  /** update/upsert: the key field's value index, named in look-ups. */
  #keyIndex = '';
  #width = 0;
  /** update/upsert: records written so far, with the line that wrote them (a key may not come back). */
  readonly #written = new Map<number, number>();
  /** What the import's evaluations may spend: a request's budget, plus a share per row read. */
  readonly #budget = requestBudget();

  constructor(ctx: EmulatorContext, table: TableRow, fields: readonly FieldRow[], options: CsvImportOptions, actor: ApiKeyGrant) {
    this.#ctx = ctx;
    this.#actor = actor;
    this.#table = table;
    this.#fields = fields;
    this.#options = options;
    this.#writer = new RecordWriter(ctx, table, fields, actor, { budget: this.#budget });
  }

  async run(records: AsyncIterable<CsvRecord>): Promise<ImportCounts> {
    const { batchSize, hasHeader } = this.#options;
    let batch: CsvRecord[] = [];
    let first = true;
    for await (const record of records) {
      if (first) {
        first = false;
        this.#bind(record);
        if (hasHeader) continue;
      }
      if (isBlank(record.cells)) {
        this.#counts.rowsSkipped++;
        continue;
      }
      batch.push(record);
      if (batch.length >= batchSize) {
        this.#flush(batch);
        batch = [];
      }
    }
    if (first && hasHeader) throw new BadRequestError('invalid CSV: the file is empty, and hasHeader says it starts with a header row');
    if (batch.length > 0) this.#flush(batch);
    return this.#counts;
  }

  #bind(first: CsvRecord): void {
    const header = this.#options.hasHeader ? headerCells(first.cells) : undefined;
    this.#width = header?.length ?? first.cells.length;
    this.#bindings = bindColumns(this.#table, this.#fields, header, this.#width, this.#options.mappings);
    if (this.#options.importMode === 'append') return;
    this.#requireReadableKeys();
    this.#keys = this.#bindings
      .filter((b) => b.policy === 'key')
      .map((binding) => ({ binding, converter: this.#writer.converter(binding.field.name, 'update')! }));
    this.#keyIndex = this.#writer.valueIndex(this.#keys[0]!.converter.plan); // key look-ups use it
  }

  /**
   * A key field must be one the role reads: matching a key it may not read would tell, through
   * the counts (updated or skipped), which hidden values exist. Key bindings come from mappings,
   * in their order.
   */
  #requireReadableKeys(): void {
    const role = roleOf(this.#actor);
    this.#bindings.forEach((binding, i) => {
      const roles = binding.field.props.readRoles;
      if (binding.policy !== 'key' || allowsRole(roles, role)) return;
      throw new ForbiddenError(
        `form.mappings[${i}]: role ${role} may not read field ${binding.field.name} (readRoles: ${roles!.join(', ')}), so it cannot be a key`,
      );
    });
  }

  #place(line: number, binding?: ColumnBinding): string {
    return binding === undefined ? `line ${line}` : `line ${line}, ${binding.label}`;
  }

  /** Places of the records of one create or update call, by their index in it (worked out only for a fault). */
  #placesOf(rows: readonly Row[]): RecordPlace {
    return (index, fieldName) => {
      const line = rows[index]!.line;
      if (fieldName === undefined) return this.#place(line);
      const binding = this.#bindings.find((b) => b.field.name === fieldName);
      return binding ? this.#place(line, binding) : `${this.#place(line)}, field ${fieldName}`;
    };
  }

  /** Cells to request values; text that is no value of its type is a fault of the batch. */
  #readRows(batch: readonly CsvRecord[], issues: Issues): Row[] {
    const { numberFormat } = this.#options;
    const bindings = this.#bindings;
    const rows: Row[] = new Array(batch.length);
    for (let r = 0; r < batch.length; r++) {
      const record = batch[r]!;
      const cells = record.cells;
      if (cells.length > this.#width && !isBlank(cells, this.#width)) {
        issues.add(`${this.#place(record.line)}: ${cells.length} cells where the ${this.#options.hasHeader ? 'header' : 'first row'} has ${this.#width}`);
      }
      const values = recordValues();
      for (let b = 0; b < bindings.length; b++) {
        const binding = bindings[b]!;
        const text = cells[binding.index] ?? '';
        if (isEmptyCell(binding.field.type, text)) continue;
        const value = cellValue(binding.field.type, text, numberFormat);
        if (value instanceof CellFault) issues.add(`${this.#place(record.line, binding)}: ${value.message}`);
        else values[binding.field.name] = value;
      }
      rows[r] = { line: record.line, values };
    }
    return rows;
  }

  #flush(batch: readonly CsvRecord[]): void {
    this.#budget.extend(batch.length * EVALUATION_STEPS_PER_ROW, batch.length * EVALUATION_MS_PER_ROW);
    const issues = new Issues();
    const rows = this.#readRows(batch, issues);
    issues.throwIfAny();
    if (this.#options.importMode === 'append') {
      this.#create(rows);
      return;
    }
    const keyed = this.#keyRows(rows, issues);
    issues.throwIfAny();
    const found = this.#lookUp(keyed);
    const updates: (KeyedRow & { id: number })[] = [];
    const creates: KeyedRow[] = [];
    for (const row of keyed) {
      const ids = found.get(row.key) ?? [];
      if (ids.length > 1) {
        issues.add(`${this.#place(row.line)}: the key ${this.#describeKey(row)} matches ${ids.length} records (${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', …' : ''})`);
        continue;
      }
      const id = ids[0];
      if (id === undefined) {
        if (this.#options.importMode === 'upsert') creates.push(row);
        else this.#counts.rowsSkipped++;
        continue;
      }
      const earlier = this.#written.get(id);
      if (earlier !== undefined) {
        issues.add(`${this.#place(row.line)}: the key ${this.#describeKey(row)} repeats line ${earlier}`);
        continue;
      }
      this.#written.set(id, row.line);
      updates.push(Object.assign(row, { id }));
    }
    issues.throwIfAny();
    if (updates.length > 0) this.#update(updates);
    if (creates.length > 0) {
      const ids = this.#create(creates);
      ids.forEach((id, i) => this.#written.set(id, creates[i]!.line));
    }
  }

  #create(rows: readonly Row[]): number[] {
    const ids = this.#writer.create(rows.map((r) => r.values), this.#placesOf(rows));
    this.#counts.rowsImported += ids.length;
    return ids;
  }

  /** An update writes the non-key cells; an empty cell clears its field, unless its policy is ignoreEmpty. */
  #update(rows: readonly (KeyedRow & { id: number })[]): void {
    const records = rows.map((row): RecordUpdate => {
      const values = recordValues();
      values.id = row.id;
      for (const binding of this.#bindings) {
        if (binding.policy === 'key') continue;
        const name = binding.field.name;
        if (Object.hasOwn(row.values, name)) values[name] = row.values[name];
        else if (binding.policy === 'overwrite') values[name] = null;
      }
      return values as RecordUpdate;
    });
    this.#counts.rowsUpdated += this.#writer.update(records, this.#placesOf(rows)).length;
  }

  /** Each row's key in stored form, through the update value checks; a key repeated within the batch is a fault. */
  #keyRows(rows: readonly Row[], issues: Issues): KeyedRow[] {
    const out: KeyedRow[] = [];
    const firstLine = new Map<string, number>();
    for (const row of rows) {
      const keyValues: unknown[] = [];
      for (const { binding, converter } of this.#keys) {
        const where = this.#place(row.line, binding);
        if (!Object.hasOwn(row.values, binding.field.name)) {
          issues.add(`${where}: the key field ${binding.field.name} is empty`);
          continue;
        }
        const value = converter.convert(row.values[binding.field.name], issues, where);
        if (value !== INVALID) keyValues.push(value);
      }
      if (keyValues.length !== this.#keys.length) continue;
      const key = JSON.stringify(keyValues);
      const earlier = firstLine.get(key);
      if (earlier !== undefined) {
        issues.add(`${this.#place(row.line)}: the key ${this.#describeKey({ keyValues })} repeats line ${earlier}`);
        continue;
      }
      firstLine.set(key, row.line);
      out.push({ ...row, key, keyValues });
    }
    return out;
  }

  #describeKey(row: Pick<KeyedRow, 'keyValues'>): string {
    return this.#keys.map(({ binding }, i) => `${binding.field.name}=${JSON.stringify(row.keyValues[i])}`).join(', ');
  }

  /** Record ids per key: candidates by the first key field (through its index), then every key field compared. */
  #lookUp(rows: readonly KeyedRow[]): Map<string, number[]> {
    const found = new Map<string, number[]>();
    if (rows.length === 0) return found;
    const first = this.#keys[0]!.converter.plan;
    const sql = `SELECT id, data FROM records INDEXED BY "${this.#keyIndex}" WHERE table_id = ${this.#table.key}
      AND json_extract(data, '${first.path}') IN (SELECT value FROM json_each(?))`;
    const candidates = dynamicStatement(this.#ctx.db, sql).all(JSON.stringify(rows.map((r) => r.keyValues[0]))) as { id: number; data: string }[];
    const wanted = new Set(rows.map((r) => r.key));
    for (const { id, data } of candidates) {
      const stored = JSON.parse(data) as Record<string, unknown>;
      const key = JSON.stringify(this.#keys.map(({ converter }) => stored[converter.plan.field.id] ?? null));
      if (!wanted.has(key)) continue;
      // A key value a read guard hides in this record matches nothing, as in a filter.
      if (!this.#keys.every(({ converter }) => this.#writer.readsValue(converter.plan, id, () => stored))) continue;
      const ids = found.get(key);
      if (ids) ids.push(id);
      else found.set(key, [id]);
    }
    return found;
  }
}

/**
 * An empty record of request values, keyed by field name. Null prototype: a field may be called
 * `__proto__`, which on a plain object would set the prototype instead of holding the value.
 */
function recordValues(): Record<string, unknown> {
  return Object.create(null) as Record<string, unknown>;
}

/** Whether every cell from `from` on is empty or spaces. */
function isBlank(cells: readonly string[], from = 0): boolean {
  for (let i = from; i < cells.length; i++) if (cells[i]!.trim() !== '') return false;
  return true;
}
