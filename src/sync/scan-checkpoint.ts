import * as z from 'zod';
import type { RecordPosition } from '../client/index.ts';

/**
 * Where a backfill or full scan stands, committed with each batch of its rows under the table's
 * `scan` cursor (catalog.ts `scanCursorKey`), so a scan stopped at any point (Ctrl-C, `kill -9`,
 * a deploy) goes on from its last committed page instead of from the first. Also what
 * `wsmirror status` shows as a backfill's progress.
 */
export interface ScanCheckpoint {
  /** When the scan began: what it read is current as of then. */
  startedAt: string;
  /** The table's columns when it began (`PulledTable.shape`): under others, it starts over. */
  shape: string;
  /** After the last record committed; null before the first page. */
  position: RecordPosition | null;
  rowsRead: number;
  /** About how many records the table held when the scan began; null when not estimated. */
  estimatedRows: number | null;
}

const checkpointSchema = z.object({
  startedAt: z.iso.datetime(),
  shape: z.string(),
  position: z.object({ offset: z.number().int().min(0), lastId: z.number().int() }).nullable(),
  rowsRead: z.number().int().min(0),
  estimatedRows: z.number().int().min(0).nullable(),
});

export function encodeCheckpoint(checkpoint: ScanCheckpoint): string {
  return JSON.stringify(checkpoint);
}

/** The stored checkpoint; undefined when there is none or it is unreadable (the scan starts over). */
export function decodeCheckpoint(text: string | undefined): ScanCheckpoint | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = checkpointSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
