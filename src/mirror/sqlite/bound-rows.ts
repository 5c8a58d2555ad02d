import type { RowSink, SqlValue } from '../dialect-driver.ts';
import { RowSlots } from '../row-slots.ts';

/**
 * Rows as the values the SQLite upsert binds, row after row in one flat array: a statement of n
 * rows binds a slice of it as it is (SQLite's `RowSink`).
 */
export class BoundRows implements RowSink {
  readonly values: SqlValue[] = [];
  /** Values per row. */
  readonly width: number;
  readonly #slots = new RowSlots();
  #next = 0;
  #bytes = 0;

  constructor(width: number) {
    this.width = width;
  }

  get ids(): readonly number[] {
    return this.#slots.ids;
  }

  /** A text counts its UTF-16 length (what SQLite binds is about as long), any other value 8. */
  get bytes(): number {
    return this.#bytes;
  }

  beginRow(id: number): void {
    this.#next = this.#slots.slot(id) * this.width;
  }

  value(value: SqlValue): void {
    this.values[this.#next++] = value;
    this.#bytes += typeof value === 'string' ? value.length : 8;
  }

  endRow(): void {}

  /** The values of row `index`. */
  row(index: number): SqlValue[] {
    return this.values.slice(index * this.width, (index + 1) * this.width);
  }
}
