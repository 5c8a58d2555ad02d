import type { ApiRecord } from '../api/records.ts';
import { MissingFieldValueError, type UpstreamCall } from '../errors.ts';
import type { RefusedPage } from './refused-page.ts';

/** Field names every record of an answer must carry (see `checkRecordFields`), and who hears of refused pages. */
export interface ExpectFieldsOption {
  /**
   * Field names every record must hold a value for, `null` included: a record without one of
   * them fails the read (missing is not null). Default: `fields`, when given.
   */
  expectFields?: readonly string[];
  /** Told each time upstream refuses a page and the read asks for fewer records (to log it). */
  onRefusedPage?: (refused: RefusedPage) => void;
}

/**
 * Refuses a page where a record lacks one of the expected field keys. A missing key is no null:
 * writing it as one would erase a value the upstream did not send.
 */
export function checkRecordFields(records: readonly ApiRecord[], expected: readonly string[], call: UpstreamCall): void {
  for (const record of records) checkFieldsOf(record, expected, call);
}

export function checkFieldsOf(record: ApiRecord, expected: readonly string[], call: UpstreamCall): void {
  for (const name of expected) {
    // Own keys only: `constructor` is a field name too, and every object inherits one.
    if (!Object.hasOwn(record.values, name)) {
      throw new MissingFieldValueError(call, record.id, name);
    }
  }
}
