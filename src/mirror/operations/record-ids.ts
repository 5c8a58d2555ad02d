import { MirrorValueError } from '../errors.ts';
import type { RecordId } from '../mirror.ts';
import { toRecordId } from '../value-codec.ts';

/** An upstream record id as a number; MirrorValueError naming the table otherwise. */
export function requireRecordId(value: RecordId, sqlTable: string): number {
  const id = toRecordId(value);
  if (id === undefined) throw new MirrorValueError(`${sqlTable}: ${JSON.stringify(value)} is not a record id (a positive integer)`);
  return id;
}
