import { sql, type Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';

/** Outbox entries from which a push makes sure the planner knows the outbox's size. */
const OUTBOX_ANALYZE_ENTRIES = 20_000;

/**
 * `ANALYZE`s the outbox (`outbox`: its schema-qualified name) when it holds many entries and the
 * planner takes it for much smaller (see DialectDriver.refreshOutboxStatistics).
 */
export async function refreshOutboxStatistics(db: Kysely<CatalogDb>, outbox: string): Promise<void> {
  try {
    // Counted, not read from pg_stat_user_tables: a session reports its changes there up to
    // seconds after they commit. The count stops at the threshold (an index-only walk).
    const { rows } = await sql<{ entries: string | number; estimated: string | number | null }>`SELECT
      (SELECT count(*) FROM (SELECT 1 FROM ${sql.raw(outbox)} LIMIT ${OUTBOX_ANALYZE_ENTRIES}) AS ${sql.id('o')}) AS ${sql.id('entries')},
      (SELECT reltuples FROM pg_class WHERE oid = ${outbox}::regclass) AS ${sql.id('estimated')}`.execute(db);
    const entries = Number(rows[0]?.entries ?? 0);
    // ANALYZE takes about 10 ms per 50,000 entries: worth it only for a large outbox that the
    // planner takes for much smaller than it is (-1: never analyzed).
    if (entries < OUTBOX_ANALYZE_ENTRIES || Number(rows[0]?.estimated ?? -1) >= entries / 2) return;
    await sql`ANALYZE ${sql.raw(outbox)}`.execute(db);
  } catch {
    // Statistics only speed reads up; a role that may not analyze reads as before.
  }
}
