import type { RowSink, SqlValue } from '../dialect.ts';
import { RowSlots } from '../row-slots.ts';

const NEEDS_ESCAPE = /[\\\n\r\t]/;

/** One value in COPY text format: `\N` for NULL, backslash escapes for the separators. */
export function copyTextValue(value: SqlValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'number') return String(value);
  if (!NEEDS_ESCAPE.test(value)) return value;
  return value.replace(/[\\\n\r\t]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'));
}

/** Bytes of COPY text handed to the connection at a time. */
const CHUNK_CHARS = 65_536;

/**
 * Rows as COPY text, each value written out as it is encoded: a row is one line, and the rows
 * of a batch are only ever held as text (Postgres' `RowSink`).
 */
export class CopyTextRows implements RowSink {
  readonly #slots = new RowSlots();
  readonly #lines: string[] = [];
  #row = 0;
  #line = '';
  #empty = true;

  get ids(): readonly number[] {
    return this.#slots.ids;
  }

  beginRow(id: number): void {
    this.#row = this.#slots.slot(id);
    this.#line = '';
    this.#empty = true;
  }

  value(value: SqlValue): void {
    const text = copyTextValue(value);
    this.#line = this.#empty ? text : `${this.#line}\t${text}`;
    this.#empty = false;
  }

  endRow(): void {
    this.#lines[this.#row] = `${this.#line}\n`;
  }

  /** The rows as COPY text, in chunks of about 64 KiB. */
  *chunks(): Generator<string> {
    let chunk = '';
    for (const line of this.#lines) {
      chunk += line;
      if (chunk.length >= CHUNK_CHARS) {
        yield chunk;
        chunk = '';
      }
    }
    if (chunk !== '') yield chunk;
  }
}
