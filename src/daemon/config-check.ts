/**
 * `wsmirror check`: does this configuration work, and what would a sync do? Reaches upstream
 * with the key, opens the mirror without creating or changing anything (mustExist) and checks
 * the daemon could write it, then plans the schema as a sync would and estimates the records of
 * every table a sync would read whole. Writes nothing, upstream or in the mirror.
 */
import { redactUrlPasswords } from '../api/secret-redaction.ts';
import { displayBaseUrl } from '../client/base-url.ts';
import type { Workspace } from '../api/workspace.ts';
import { withSettingHint } from './setting-hints.ts';
import { InvalidResponseError, MirrorFileMissingError, NetworkError, UpstreamError } from '../errors.ts';
import type { Catalog, MirrorTable, TableMode } from '../mirror/index.ts';
import { describeOp, displayMirrorUrl, mirrorCreationProblems, planSchema, tableLabel, describeUnmatchedPattern, unmatchedPatterns, type UnmatchedPattern } from '../mirror/index.ts';
import type { Mirror } from '../mirror/mirror.ts';
import { leavingMissingTables, refusedTables, tooWideTables } from '../sync/index.ts';
import type { Config } from './config-types.ts';
import { mirrorUrlOf, openConfiguredMirror } from './configured-mirror.ts';
import { claimProblem, readClaim } from './mirror-claim.ts';
import type { Logger } from './logger.ts';
import { createWorkspaceClient } from './upstream-client.ts';

export type PlannedAction = 'backfill' | 'poll changes' | 'full scan';

export interface CheckReport {
  /** True when upstream answered and the mirror can be written (or created). */
  ok: boolean;
  configFile: string | null;
  upstream: { baseUrl: string; workspaceId: string; ok: boolean; error?: string };
  mirror: {
    url: string;
    /** The Postgres schema; null on SQLite. */
    schema: string | null;
    /** False when a first sync would create it. */
    exists: boolean;
    ok: boolean;
    /** What would keep the daemon from writing it. */
    problems: string[];
    /** What the next sync brings up to this version (a note, not a failure). */
    upgrades: string[];
  };
  /** The table patterns that match no upstream table (a warning, not a failure); empty when upstream could not be read. */
  unmatchedPatterns: (UnmatchedPattern & { message: string })[];
  /** What a sync would do; null when upstream could not be read. */
  plan: {
    operations: string[];
    tables: { table: string; mode: TableMode; action: PlannedAction; rows: number | null; estimatedRows: number | null }[];
    /** Tables a sync would refuse (names outside the API's rule). */
    refused: string[];
    /**
     * Tables a catalog migration held back (a view of a user's own in the way): a sync leaves them
     * as they are until it applies; `wsmirror status` shows why.
     */
    unmigrated: string[];
  } | null;
}

/** An error as the report shows it: a password in a URL it quotes is never printed. */
function message(error: unknown): string {
  return redactUrlPasswords(error instanceof Error ? error.message : String(error));
}

/** Errors of a mustExist open that only mean "not created yet": a first sync creates it. */
const NOT_CREATED_YET = /run wsmirror sync to create it/;
const notCreatedYet = (error: unknown) => error instanceof MirrorFileMissingError || NOT_CREATED_YET.test(message(error));

export async function runCheck(config: Config, deps: { logger: Logger }): Promise<CheckReport> {
  const report: CheckReport = {
    ok: false,
    configFile: config.configFile,
    upstream: { baseUrl: displayBaseUrl(config.upstream.baseUrl), workspaceId: config.upstream.workspaceId, ok: false },
    mirror: {
      // Display forms: a password in a URL is never printed.
      url: displayMirrorUrl(mirrorUrlOf(config)),
      schema: config.mirror.dialect === 'postgres' ? config.mirror.pgSchema : null,
      exists: false, ok: false, problems: [], upgrades: [],
    },
    unmatchedPatterns: [],
    plan: null,
  };
  const client = createWorkspaceClient(config, { logger: deps.logger });
  let mirror: Mirror | undefined;
  try {
    let workspace: Workspace | undefined;
    try {
      workspace = await client.getWorkspace();
      report.upstream.ok = true;
      report.unmatchedPatterns = unmatchedPatterns(config.tables, workspace).map((u) => ({ ...u, message: describeUnmatchedPattern(u) }));
    } catch (error) {
      // As a sync says it: a refused key names where it came from, an unknown workspace its setting.
      report.upstream.error = message(withSettingHint(error, config.upstream, { workspaceCheck: true }));
    }

    try {
      mirror = await openConfiguredMirror(config, { logger: deps.logger, mustExist: true });
      report.mirror.exists = true;
      report.mirror.url = mirror.displayUrl;
      report.mirror.problems = await mirror.accessProblems();
      const claim = claimProblem(await readClaim(mirror), mirror.displayUrl, config.upstream.workspaceId, config.upstream.baseUrl);
      if (claim !== undefined) report.mirror.problems.push(claim);
      report.mirror.upgrades = await mirror.pendingUpgrades();
    } catch (error) {
      if (!notCreatedYet(error)) report.mirror.problems.push(message(error));
      else {
        const pgSchema = config.mirror.dialect === 'postgres' ? { pgSchema: config.mirror.pgSchema } : {};
        report.mirror.problems.push(...await mirrorCreationProblems(mirrorUrlOf(config), pgSchema).catch((e: unknown) => [message(e)]));
      }
    }
    report.mirror.ok = report.mirror.problems.length === 0;

    if (workspace && (mirror || report.mirror.ok)) {
      try {
        const catalog: Catalog = mirror
          ? await mirror.readCatalog()
          : { dialect: config.mirror.dialect, revision: 0, tables: [], fields: [], foreignNames: [], unmigrated: [], missing: [], foreignTriggers: [], extraGrants: false };
        report.plan = await planOf(catalog, workspace, config, mirror, (t) => client.estimateRecordCount(t.moduleName, t.tableName));
      } catch (error) {
        // A failure of the plan is a FAIL of the side it came from, like the checks above.
        if (isUpstreamFailure(error)) {
          report.upstream.ok = false;
          report.upstream.error = message(withSettingHint(error, config.upstream));
        } else {
          // Said once: the same cause may have failed the access check above.
          if (!report.mirror.problems.includes(message(error))) report.mirror.problems.push(message(error));
          report.mirror.ok = false;
        }
      }
    }
    report.ok = report.upstream.ok && report.mirror.ok;
    return report;
  } finally {
    await client.close();
    await mirror?.close();
  }
}

function isUpstreamFailure(error: unknown): boolean {
  return error instanceof UpstreamError || error instanceof NetworkError || error instanceof InvalidResponseError;
}

async function planOf(
  catalog: Catalog, workspace: Workspace, config: Config, mirror: Mirror | undefined,
  estimate: (table: MirrorTable) => Promise<number>,
): Promise<NonNullable<CheckReport['plan']>> {
  const filter = { include: config.tables.include, exclude: config.tables.exclude };
  const refused = refusedTables(workspace, filter);
  refused.push(...tooWideTables(workspace, filter, catalog.dialect, new Set(refused.map((r) => r.tableId))));
  const hold = new Set([...refused.map((r) => r.tableId), ...catalog.unmigrated]);
  // Tables whose SQL table is missing are held as a sync holds them (mirror.problems names them).
  const leaving = leavingMissingTables(catalog, workspace, filter, hold);
  for (const id of catalog.missing) if (!leaving.has(id)) hold.add(id);
  // And those carrying a trigger of another role (mirror.problems names them too).
  for (const { tableId } of catalog.foreignTriggers) hold.add(tableId);
  const plan = planSchema(catalog, workspace, filter, hold);
  // The catalog as the plan leaves it.
  const after = new Map(catalog.tables.map((t) => [t.tableId, t]));
  for (const op of plan.ops) {
    if (op.op === 'dropTable') after.delete(op.table.tableId);
    else if (op.op === 'createTable' || op.op === 'updateTable') after.set(op.table.tableId, op.table);
  }
  const tables: NonNullable<CheckReport['plan']>['tables'] = [];
  for (const t of [...after.values()].sort((a, b) => a.sqlName.localeCompare(b.sqlName))) {
    const action: PlannedAction = t.state === 'needs_backfill' ? 'backfill' : t.mode === 'history' ? 'poll changes' : 'full scan';
    const exists = catalog.tables.some((c) => c.tableId === t.tableId);
    tables.push({
      table: tableLabel(t),
      mode: t.mode,
      action,
      rows: mirror && exists && !catalog.missing.includes(t.tableId) ? await mirror.countRows(t.tableId) : null,
      // Only tables a sync reads whole: the size is what it will cost.
      estimatedRows: action === 'poll changes' ? null : await estimate(t),
    });
  }
  const unmigrated = catalog.tables.filter((t) => catalog.unmigrated.includes(t.tableId)).map(tableLabel);
  return { operations: plan.ops.map(describeOp), tables, refused: refused.map((r) => r.table), unmigrated };
}
