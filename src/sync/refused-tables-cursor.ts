import * as z from 'zod';
import type { RefusedTable } from './name-rule.ts';

/**
 * The tables the last workspace read refused, as JSON in the cursors: readable in SQL, a reason
 * to read the workspace again, and the only record of a refused table that was never created
 * (it has no catalog row), which `wsmirror status` lists from here.
 */
export const REFUSED_CURSOR_KEY = 'schema:refused-tables';

/** A refused table as stored, with when the schema pull refused it (absent in lists stored by earlier versions). */
export interface StoredRefusal extends RefusedTable {
  at?: string;
}

const refusalSchema = z.object({
  tableId: z.string(),
  table: z.string(),
  module: z.string().optional(),
  name: z.string().optional(),
  mode: z.enum(['history', 'fullscan']),
  code: z.enum(['INVALID_RESPONSE', 'SAFETY_VALVE', 'MIRROR_LIMIT', 'MIRROR', 'MIRROR_LOCKED']),
  message: z.string(),
  at: z.iso.datetime().optional(),
});

/** The cursor's value: null (no cursor) when nothing is refused. */
export function encodeRefusals(refused: readonly RefusedTable[], at: string): string | null {
  return refused.length === 0 ? null : JSON.stringify(refused.map((r) => ({ ...r, at })));
}

/**
 * The stored list; empty when there is none. The value may have been edited by hand: an entry
 * that does not read as a refusal is left out, and a value that is not a JSON list gives none.
 */
export function decodeRefusals(text: string | undefined): StoredRefusal[] {
  if (text === undefined) return [];
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(list)) return [];
  return list.flatMap((entry) => {
    const parsed = refusalSchema.safeParse(entry);
    return parsed.success ? [parsed.data as StoredRefusal] : [];
  });
}
