import type { RowSink, SqlValue } from '../dialect-driver.ts';
import { RowSlots } from '../row-slots.ts';

const NEEDS_ESCAPE = /[\\\n\r\t]/;

/** One value in COPY text format: `\N` for NULL, backslash escapes for the separators. */
function copyTextValue(value: SqlValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'number') return String(value);
  if (!NEEDS_ESCAPE.test(value)) return value;
  return value.replace(/[\\\n\r\t]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'));
}

/** Bytes of COPY text gathered in one buffer before it is handed on. */
const CHUNK_BYTES = 65_536;

/**
 * Rows as COPY text (Postgres' `RowSink`): each line is built as one string and written out as
 * UTF-8 into 64 KiB buffers at once, so a batch waiting for its write holds no JavaScript
 * strings and the records it came from are garbage at once. Only the line being built is a
 * string: a batch's text never lives on the heap as a long chain of small strings that every
 * young-generation collection would have to copy.
 *
 * A repeated id cannot be taken out of bytes already written, so the write keeps the last line
 * of each id instead (`repeatedIds`): the stage numbers the lines as COPY reads them
 * (ROW_NUMBER_COLUMN), so the lines themselves hold only the values and fit the table too.
 */
export class CopyTextRows implements RowSink {
  readonly #slots = new RowSlots();
  readonly #chunks: Buffer[] = [];
  #buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  #used = 0;
  /** Bytes in `#chunks`. */
  #chunked = 0;
  #line = '';
  #first = true;
  #repeated = false;

  get ids(): readonly number[] {
    return this.#slots.ids;
  }

  /** Bytes of COPY text written so far. */
  get bytes(): number {
    return this.#chunked + this.#used;
  }

  /** True when an id came more than once: the write must keep only its last line. */
  get repeatedIds(): boolean {
    return this.#repeated;
  }

  beginRow(id: number): void {
    const known = this.#slots.ids.length;
    if (this.#slots.slot(id) < known) this.#repeated = true;
    this.#first = true;
  }

  value(value: SqlValue): void {
    if (this.#first) {
      this.#line = copyTextValue(value);
      this.#first = false;
    } else {
      this.#line += `\t${copyTextValue(value)}`;
    }
  }

  endRow(): void {
    const line = `${this.#line}\n`;
    this.#line = '';
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    const most = line.length * 3;
    if (this.#used + most > this.#buffer.length) {
      if (this.#used > 0) {
        this.#chunks.push(this.#buffer.subarray(0, this.#used));
        this.#chunked += this.#used;
      }
      this.#buffer = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, most));
      this.#used = 0;
    }
    this.#used += this.#buffer.write(line, this.#used, 'utf8');
  }

  /** The rows as COPY text, in chunks of about 64 KiB. */
  *chunks(): Generator<Buffer> {
    yield* this.#chunks;
    if (this.#used > 0) yield this.#buffer.subarray(0, this.#used);
  }
}

/** The stage column numbering the lines in the order COPY reads them (an identity column). */
export const ROW_NUMBER_COLUMN = '_wsmirror_row';
