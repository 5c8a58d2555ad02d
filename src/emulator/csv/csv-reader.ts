import { createReadStream } from 'node:fs';
import { Readable, pipeline } from 'node:stream';
import { CsvError, parse, type Options } from 'csv-parse';
import type { CsvEncoding, CsvNumberFormat } from '../../api/index.ts';
import { ApiError, BadRequestError } from '../errors.ts';
import { detectDelimiter } from './delimiter-detection.ts';

/**
 * Streams a CSV file from disk and hands out its records with the line each starts on: only a
 * chunk of the file and the records csv-parse has buffered are in memory at a time.
 *
 * Bytes are decoded strictly (a byte sequence that is not text in the encoding is a 400, never a
 * silent replacement character), a byte-order mark is dropped, and the text goes through
 * csv-parse's stream API. csv-parse does RFC 4180: quoted delimiters and line breaks, doubled
 * quotes, CRLF or LF.
 */

export interface CsvFormat {
  /** Absent: UTF-8, or UTF-16LE when the file starts with its byte-order mark. */
  encoding: CsvEncoding | undefined;
  /** Absent: detected from the first lines (delimiter-detection.ts). */
  delimiter: string | undefined;
  quoteChar: string;
  numberFormat: CsvNumberFormat;
}

export interface CsvRecord {
  /** 1-based line of the file on which the record starts. */
  line: number;
  cells: string[];
}

const CHUNK_BYTES = 64 * 1024;
/** Text gathered before the delimiter is detected: a few dozen lines of a usual file. */
const SAMPLE_CHARS = 16 * 1024;
/** Longest record, in characters: guards against an unclosed quote swallowing the file. */
const MAX_RECORD_CHARS = 8 * 1024 * 1024;

const DECODER_LABELS: Record<CsvEncoding, string> = { utf8: 'utf-8', utf16le: 'utf-16le', latin1: 'latin1' };
const ENCODING_NAMES: Record<CsvEncoding, string> = { utf8: 'UTF-8', utf16le: 'UTF-16LE', latin1: 'Latin-1' };

export class CsvFileReader {
  readonly #path: string;
  readonly #format: CsvFormat;
  #delimiter: string | undefined;
  #encoding: CsvEncoding | undefined;

  constructor(path: string, format: CsvFormat) {
    this.#path = path;
    this.#format = format;
    this.#delimiter = format.delimiter;
    this.#encoding = format.encoding;
  }

  /** The delimiter used (detected once reading has started). */
  get delimiter(): string | undefined {
    return this.#delimiter;
  }

  get encoding(): CsvEncoding | undefined {
    return this.#encoding;
  }

  /**
   * The records of the file, in order. A malformed file throws a 400 naming the line. Stopping
   * early (a bad row) closes the file.
   */
  async *records(): AsyncGenerator<CsvRecord, void, undefined> {
    const text = this.#text();
    // The delimiter is detected on the first lines, before the parser is made.
    let sample = '';
    let complete = false;
    while (sample.length < SAMPLE_CHARS) {
      const next = await text.next();
      if (next.done) {
        complete = true;
        break;
      }
      sample += next.value;
    }
    this.#delimiter ??= detectDelimiter(sample, this.#format.quoteChar, this.#format.numberFormat, complete);
    // Every line gives a record (blank ones too), so a record starts one line after the line
    // breaks inside the previous one's quoted cells. Counted as csv-parse hands each record out,
    // so when it fails `line` is where the failing record starts.
    let line = 1;
    const options: Options<CsvRecord, string[]> = {
      delimiter: this.#delimiter,
      quote: this.#format.quoteChar,
      escape: this.#format.quoteChar,
      // Any line ending, even mixed in one file (files glued together from two systems).
      record_delimiter: ['\r\n', '\n', '\r'],
      relax_column_count: true,
      relax_quotes: true,
      max_record_size: MAX_RECORD_CHARS,
      on_record: (cells: string[]): CsvRecord => {
        const record = { line, cells };
        line += 1 + lineBreaksIn(cells);
        return record;
      },
    };
    // Its typings tie on_record's output to the default record type; the stream hands out CsvRecords.
    const parser = parse(options as unknown as Options);
    // Errors reach the loop below through the parser; the callback only keeps them from being unhandled.
    pipeline(Readable.from(rest(sample, text), { objectMode: false }), parser, () => undefined);
    try {
      for await (const record of parser) yield record as CsvRecord;
    } catch (error) {
      if (error instanceof ApiError) throw error;
      if (error instanceof CsvError) throw new BadRequestError(`invalid CSV: the record starting on line ${line}${describeCsvError(error)}`);
      throw error;
    } finally {
      parser.destroy();
    }
  }

  /**
   * The file's text, decoded strictly (a byte sequence that is not text in the encoding is a 400,
   * never a silent replacement character), without a byte-order mark.
   */
  async *#text(): AsyncGenerator<string, void, undefined> {
    let decoder: TextDecoder | undefined;
    let offset = 0;
    for await (const chunk of createReadStream(this.#path, { highWaterMark: CHUNK_BYTES }) as AsyncIterable<Buffer>) {
      if (!decoder) {
        this.#encoding ??= chunk.length >= 2 && chunk[0] === 0xff && chunk[1] === 0xfe ? 'utf16le' : 'utf8';
        decoder = new TextDecoder(DECODER_LABELS[this.#encoding], { fatal: true });
      }
      let text: string;
      try {
        text = decoder.decode(chunk, { stream: true });
      } catch {
        throw new BadRequestError(this.#notText(offset, chunk.length));
      }
      offset += chunk.length;
      if (text !== '') yield text;
    }
    decoder ??= new TextDecoder(DECODER_LABELS[this.#encoding ?? 'utf8'], { fatal: true });
    let last: string;
    try {
      last = decoder.decode();
    } catch {
      throw new BadRequestError(this.#notText(offset, 0));
    }
    if (last !== '') yield last;
  }

  #notText(offset: number, length: number): string {
    const name = ENCODING_NAMES[this.#encoding ?? 'utf8'];
    const hint = this.#encoding === 'utf8'
      ? ': send the encoding part (utf16le or latin1) when the file is in another encoding'
      : '';
    return `file is not valid ${name} text (bytes ${offset} to ${offset + Math.max(length, 1) - 1})${hint}`;
  }
}

/** The sample, then the rest of the text. */
async function* rest(sample: string, text: AsyncGenerator<string, void, undefined>): AsyncGenerator<string, void, undefined> {
  if (sample !== '') yield sample;
  yield* text;
}

function lineBreaksIn(cells: readonly string[]): number {
  let breaks = 0;
  for (const cell of cells) {
    if (cell.indexOf('\n') < 0 && cell.indexOf('\r') < 0) continue;
    breaks += cell.match(/\r\n|\r|\n/g)!.length;
  }
  return breaks;
}

/**
 * What follows "the record starting on line N": csv-parse's message, which already says where
 * (`at line 3`), without the option hints. The record size is said in wsmirror's words: csv-parse
 * counts characters of the decoded text but calls them bytes.
 */
function describeCsvError(error: Error): string {
  const code = (error as { code?: string }).code;
  if (code === 'CSV_MAX_RECORD_SIZE') return ` is longer than ${MAX_RECORD_CHARS} characters (8 Mi): is a quote left open?`;
  return `: ${error.message.replace(/, got [^,]*$/, '')}`;
}
