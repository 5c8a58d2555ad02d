import type { Command } from 'commander';
import type { Mirror, OutboxStatus, TableMode, TableState } from '../../mirror/index.ts';
import { withConfigOption, type ConfigFlags } from '../config-option.ts';

export type OutboxCounts = Record<OutboxStatus, number>;

/** One mirrored table in the report. The JSON form is a contract for scripts: add, never rename. */
export interface TableStatus {
  /** `module.table` */
  table: string;
  module: string;
  name: string;
  tableId: string;
  sqlName: string;
  mode: TableMode;
  state: TableState;
  /** Null when the SQL table cannot be counted (see `error`). */
  rows: number | null;
  /** End of the last successful record pull, ISO 8601; null before the first one. */
  lastPullAt: string | null;
  /** `checkedAt` − `lastPullAt` in milliseconds; null before the first pull. */
  lagMs: number | null;
  outbox: OutboxCounts;
  error?: string;
}

export interface StatusReport {
  /** The mirror URL, password masked. */
  mirror: string;
  /** The Postgres schema holding the mirror; null on SQLite. */
  schema: string | null;
  checkedAt: string;
  tables: TableStatus[];
  /** Every outbox entry, including those of tables no longer mirrored. */
  outbox: OutboxCounts;
  /** When the oldest pending local edit was made (ISO 8601), null when none is pending. */
  oldestPendingAt: string | null;
  /** `checkedAt` − `oldestPendingAt` in milliseconds; null when none is pending. */
  oldestPendingAgeMs: number | null;
}

function noEntries(): OutboxCounts {
  return { pending: 0, failed: 0, conflict: 0 };
}

/** Reads the report from the mirror alone (no upstream call). */
export async function collectStatus(
  mirror: Mirror, options: { pgSchema?: string; now?: Date } = {},
): Promise<StatusReport> {
  const now = options.now ?? new Date();
  const catalog = await mirror.readCatalog();
  const summary = await mirror.outboxSummary();
  const outbox = noEntries();
  const perTable = new Map<string, OutboxCounts>();
  for (const entry of summary) {
    outbox[entry.status] += entry.count;
    const counts = perTable.get(entry.tableId) ?? noEntries();
    counts[entry.status] += entry.count;
    perTable.set(entry.tableId, counts);
  }
  const tables: TableStatus[] = [];
  for (const t of catalog.tables) {
    let rows: number | null = null;
    let error: string | undefined;
    try {
      rows = await mirror.countRows(t.tableId);
    } catch (e) {
      // A SQL table dropped or damaged by hand: report it, keep going with the others.
      error = `cannot count the rows of ${t.sqlName}: ${e instanceof Error ? e.message : String(e)}`;
    }
    const pulledAt = t.lastPullAt === null ? NaN : Date.parse(t.lastPullAt);
    tables.push({
      table: `${t.moduleName}.${t.tableName}`,
      module: t.moduleName,
      name: t.tableName,
      tableId: t.tableId,
      sqlName: t.sqlName,
      mode: t.mode,
      state: t.state,
      rows,
      lastPullAt: Number.isNaN(pulledAt) ? null : new Date(pulledAt).toISOString(),
      lagMs: Number.isNaN(pulledAt) ? null : Math.max(0, now.getTime() - pulledAt),
      outbox: perTable.get(t.tableId) ?? noEntries(),
      ...(error === undefined ? {} : { error }),
    });
  }
  tables.sort((a, b) => (a.table < b.table ? -1 : a.table > b.table ? 1 : 0));
  const schema = mirror.dialect === 'postgres' ? (options.pgSchema ?? 'public') : null;
  const oldestPendingAt = await mirror.oldestPendingAt();
  const oldestMs = oldestPendingAt === null ? NaN : Date.parse(oldestPendingAt);
  return {
    mirror: mirror.displayUrl, schema, checkedAt: now.toISOString(), tables, outbox,
    oldestPendingAt: Number.isNaN(oldestMs) ? null : new Date(oldestMs).toISOString(),
    oldestPendingAgeMs: Number.isNaN(oldestMs) ? null : Math.max(0, now.getTime() - oldestMs),
  };
}

/** `12s`, `3m 05s`, `2h 10m`, `4d 3h`; `never` before the first pull. */
export function formatLag(ms: number | null): string {
  if (ms === null) return 'never';
  const s = Math.floor(Math.max(0, ms) / 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
}

const COLUMNS: readonly { title: string; right?: boolean; value: (t: TableStatus) => string }[] = [
  { title: 'TABLE', value: (t) => t.table },
  { title: 'SQL TABLE', value: (t) => t.sqlName },
  { title: 'MODE', value: (t) => t.mode },
  { title: 'STATE', value: (t) => t.state },
  { title: 'ROWS', right: true, value: (t) => (t.rows === null ? '?' : String(t.rows)) },
  { title: 'LAST PULL', value: (t) => t.lastPullAt ?? '-' },
  { title: 'LAG', right: true, value: (t) => formatLag(t.lagMs) },
  { title: 'PENDING', right: true, value: (t) => String(t.outbox.pending) },
  { title: 'FAILED', right: true, value: (t) => String(t.outbox.failed) },
  { title: 'CONFLICT', right: true, value: (t) => String(t.outbox.conflict) },
];

/** The plain-text form: an aligned table, then the outbox totals. */
export function formatStatusText(report: StatusReport): string {
  const lines = [`mirror: ${report.mirror}${report.schema === null ? '' : ` (schema ${report.schema})`}`, ''];
  if (report.tables.length === 0) {
    lines.push('no tables mirrored yet (run wsmirror sync)');
  } else {
    const cells = [COLUMNS.map((c) => c.title), ...report.tables.map((t) => COLUMNS.map((c) => c.value(t)))];
    const widths = COLUMNS.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
    for (const row of cells) {
      lines.push(row.map((cell, i) => (COLUMNS[i]!.right ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ').trimEnd());
    }
    for (const t of report.tables) if (t.error !== undefined) lines.push(`${t.table}: ${t.error}`);
  }
  const { pending, failed, conflict } = report.outbox;
  const oldest = report.oldestPendingAgeMs === null ? '' : ` (oldest pending edit ${formatLag(report.oldestPendingAgeMs)} old)`;
  lines.push('', `outbox: ${pending} pending, ${failed} failed, ${conflict} conflict${oldest}`);
  const listed = report.tables.reduce((n, t) => n + t.outbox.pending + t.outbox.failed + t.outbox.conflict, 0);
  const unlisted = pending + failed + conflict - listed;
  if (unlisted > 0) lines.push(`  (${unlisted} of them belong to tables no longer mirrored)`);
  return `${lines.join('\n')}\n`;
}

export function defineStatusCommand(program: Command): Command {
  return withConfigOption(
    program
      .command('status')
      .description('show each mirrored table: mode, state, rows, last pull, lag and outbox counts (reads only the mirror)')
      .option('--json', 'print the report as one JSON document'),
  ).action(async (flags: ConfigFlags & { json?: boolean }) => {
    const [{ commandLogger, loadCommandConfig }, { logConfiguration }, { openConfiguredMirror }] = await Promise.all([
      import('../command-config.ts'),
      import('../../daemon/log-configuration.ts'),
      import('../../daemon/configured-mirror.ts'),
    ]);
    // The upstream is not needed: a machine that only reads the mirror has no key.
    const config = loadCommandConfig(flags, { upstream: 'optional' });
    // stdout carries the report; logs (e.g. unknown WSMIRROR_* variables) go to stderr.
    const logger = commandLogger(config, { toStderr: true });
    logConfiguration(logger, config);
    const mirror = await openConfiguredMirror(config, { logger, mustExist: true });
    try {
      const report = await collectStatus(mirror, { pgSchema: config.mirror.pgSchema });
      process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatStatusText(report));
    } finally {
      await mirror.close();
    }
  });
}
