import { SCHEMA_CURSOR_KEY } from '../mirror/catalog.ts';
import { describeOp, planSchema } from '../mirror/schema-planner.ts';
import { BEGINNING, nextSince } from './poll-window.ts';
import type { SyncContext } from './sync-context.ts';

/** Remembers which include/exclude patterns the catalog was planned with. */
const FILTER_CURSOR_KEY = 'schema:table-filter';

export interface SchemaPullResult {
  /** The workspace was read and diffed (first run, upstream change, or new table patterns). */
  reread: boolean;
  /** DDL operations applied. */
  operations: string[];
}

/**
 * Schema pull (DESIGN §4.2): poll schema changes from the saved cursor; on any change, on the
 * first run, or when the table patterns changed, read the whole workspace, diff it against the
 * catalog and apply the plan. DDL, catalog and the new cursor commit together.
 */
export async function pullSchema(ctx: SyncContext): Promise<SchemaPullResult> {
  const { client, mirror, options } = ctx;
  const since = await mirror.getCursor(SCHEMA_CURSOR_KEY);
  const filterKey = JSON.stringify({ include: options.tables.include ?? [], exclude: options.tables.exclude ?? [] });
  let changed = since === undefined || (await mirror.getCursor(FILTER_CURSOR_KEY)) !== filterKey;
  let asOf: string;

  if (since === undefined) {
    // First run: only the server's "now" is needed; the whole workspace is read below.
    asOf = (await client.listSchemaChanges({ since: BEGINNING, limit: 1 })).meta.asOf;
  } else {
    const poll = client.pollSchemaChanges({ since, pageSize: options.pageSize });
    for await (const page of poll) {
      if (page.length > 0) changed = true;
    }
    asOf = poll.asOf!;
  }

  const cursors = { [SCHEMA_CURSOR_KEY]: nextSince(asOf, options.lookbackMs), [FILTER_CURSOR_KEY]: filterKey };
  if (!changed) {
    await mirror.setCursor(SCHEMA_CURSOR_KEY, cursors[SCHEMA_CURSOR_KEY]);
    return { reread: false, operations: [] };
  }
  const workspace = await client.getWorkspace();
  const catalog = await mirror.readCatalog();
  const plan = planSchema(catalog, workspace, options.tables);
  await mirror.applySchemaPlan(plan, { cursors });
  const operations = plan.ops.map(describeOp);
  if (operations.length > 0) ctx.logger.info({ operations }, 'schema applied');
  return { reread: true, operations };
}
