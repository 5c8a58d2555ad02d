import { sql } from 'kysely';
import type { WriteTx } from '../dialect.ts';

/** Runs SQL texts a dialect wrote (views, capture, conversions) in order, inside `tx`. */
export async function runStatements(tx: WriteTx, statements: readonly string[]): Promise<void> {
  for (const text of statements) await sql.raw(text).execute(tx.db);
}
