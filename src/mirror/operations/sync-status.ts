import { CATALOG_MIGRATIONS } from '../catalog-tables.ts';
import { readCatalogVersion } from '../catalog-version.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { assertOpen } from '../mirror-context.ts';
import { writeCursors } from './cursors.ts';
import type { CycleRecord, CycleSummary, TableSyncState } from '../mirror.ts';

const KEYS = {
  lastStartedAt: 'cycle_last_started_at',
  lastSuccessAt: 'cycle_last_success_at',
  lastFailureAt: 'cycle_last_failure_at',
  lastFailure: 'cycle_last_failure',
  nextRunAt: 'cycle_next_run_at',
} as const satisfies Record<keyof CycleSummary, string>;

/** The catalog layout that added the table state columns. */
const STATE_LAYOUT = CATALOG_MIGRATIONS.find((m) => m.addColumns.some((c) => c.column === 'current_as_of'))!.version;

export async function readSyncState(ctx: MirrorContext): Promise<{ tables: TableSyncState[]; cycle: CycleSummary }> {
  assertOpen(ctx);
  const d = ctx.driver;
  const cat = d.catalog(d.db);
  // A mirror of an older layout, opened read-only (`status`) before a daemon of this version
  // migrated it, has no state yet.
  const layout = Number(await readCatalogVersion(cat));
  const rows = layout < STATE_LAYOUT ? [] : await cat.selectFrom('_wsmirror_tables')
    .select(['table_id', 'current_as_of', 'last_error_code', 'last_error', 'last_error_at']).orderBy('table_id').execute();
  const tables = rows.map((r): TableSyncState => ({
    tableId: r.table_id,
    currentAsOf: d.fromTimestamp(r.current_as_of),
    lastError: r.last_error_code === null
      ? null
      : { code: r.last_error_code, message: r.last_error ?? '', at: d.fromTimestamp(r.last_error_at) ?? '' },
  }));
  const meta = new Map((await cat.selectFrom('_wsmirror_meta').select(['key', 'value'])
    .where('key', 'in', Object.values(KEYS)).execute()).map((r) => [r.key, r.value]));
  const cycle = Object.fromEntries(Object.entries(KEYS).map(([name, key]) => [name, meta.get(key) ?? null])) as unknown as CycleSummary;
  return { tables, cycle };
}

/** Stores the outcome of a cycle, and the cursors it carries, in one daemon transaction. */
export async function recordCycle(ctx: MirrorContext, cycle: CycleRecord): Promise<void> {
  assertOpen(ctx);
  const values: Partial<Record<keyof CycleSummary, string | null>> = { lastStartedAt: cycle.startedAt };
  if (cycle.problems.length === 0) values.lastSuccessAt = cycle.finishedAt;
  else Object.assign(values, { lastFailureAt: cycle.finishedAt, lastFailure: cycle.problems.join('\n') });
  if (cycle.nextRunAt !== undefined) values.nextRunAt = cycle.nextRunAt;
  const entries = Object.entries(values) as [keyof CycleSummary, string | null][];
  const stored = entries.flatMap(([name, value]) => (value === null ? [] : [{ key: KEYS[name], value }]));
  const cleared = entries.flatMap(([name, value]) => (value === null ? [KEYS[name]] : []));
  // Every cycle writes this, all at commit: one round trip to a Postgres server.
  await ctx.driver.write(async (tx) => {
    const cat = ctx.driver.catalog(tx.db);
    tx.atCommit([
      ...(stored.length === 0 ? [] : [cat.insertInto('_wsmirror_meta').values(stored)
        .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ value: eb.ref('excluded.value') }))).compile()]),
      ...(cleared.length === 0 ? [] : [cat.deleteFrom('_wsmirror_meta').where('key', 'in', cleared).compile()]),
    ]);
    writeCursors(ctx, tx, cycle.cursors);
  });
}
