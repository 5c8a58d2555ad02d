import { printable } from '../printable.ts';
import type { Command } from 'commander';
import { formatDuration } from '../../daemon/units.ts';
import { EXIT } from '../../errors.ts';
import { withConfigOption, type ConfigFlags } from '../config-option.ts';
import { textTable, type TextColumn } from '../text-table.ts';
import type { StatusReport, TableStatus } from '../status-report.ts';

export type { StatusReport, TableStatus } from '../status-report.ts';

/** A table's lag as a duration; `never` before its first pull. */
function lagCell(t: TableStatus): string {
  return t.lagMs === null ? 'never' : formatDuration(t.lagMs);
}

const COLUMNS: readonly TextColumn<TableStatus>[] = [
  { title: 'TABLE', value: (t) => t.table },
  { title: 'SQL TABLE', value: (t) => t.sqlName ?? '-' },
  { title: 'MODE', value: (t) => t.mode },
  { title: 'STATE', value: stateCell },
  { title: 'ROWS', right: true, value: (t) => (t.rows === null ? '?' : String(t.rows)) },
  { title: 'LAST PULL', value: (t) => t.lastPullAt ?? '-' },
  { title: 'LAG', right: true, value: lagCell },
  { title: 'PENDING', right: true, value: (t) => (t.outbox === null ? '?' : String(t.outbox.pending)) },
  { title: 'FAILED', right: true, value: (t) => (t.outbox === null ? '?' : String(t.outbox.failed)) },
  { title: 'CONFLICT', right: true, value: (t) => (t.outbox === null ? '?' : String(t.outbox.conflict)) },
];

/** `ready`, `backfilling 42%`, `blocked`, `failing`. */
function stateCell(t: TableStatus): string {
  if (t.status !== 'backfilling') return t.status;
  return t.progress?.percent == null ? 'backfilling' : `backfilling ${t.progress.percent}%`;
}

/** `2026-05-01T10:00:00.000Z (3m 05s ago)`, `(in 25s)`, or `never`. */
function when(at: string | null, now: number): string {
  if (at === null) return 'never';
  const ms = Date.parse(at) - now;
  return `${at} (${ms > 0 ? `in ${formatDuration(ms)}` : `${formatDuration(-ms)} ago`})`;
}

/** The plain-text form: an aligned table, each table's problem, the cycles, the outbox, and what needs attention. */
export function formatStatusText(report: StatusReport): string {
  const lines = [`mirror: ${report.mirror}${report.schema === null ? '' : ` (schema ${report.schema})`}`, ''];
  const say = (text: string) => printable(text);
  if (report.tables.length === 0) {
    lines.push('no tables mirrored yet (run wsmirror sync)');
  } else {
    lines.push(...textTable(COLUMNS, report.tables));
    for (const t of report.tables) {
      // A missing SQL table's error, or a foreign trigger's, says what to do; its last pull's adds nothing to it.
      if (t.lastError && !t.missing && !t.foreignTrigger) lines.push(say(`${t.table}: ${t.status} since ${t.lastError.at} (${t.lastError.code}): ${t.lastError.message}`));
      if (t.error !== undefined) lines.push(say(`${t.table}: ${t.error}`));
      if (t.progress && t.status !== 'blocked' && !t.missing && !t.foreignTrigger) {
        const of = t.progress.estimatedRows === null ? '' : ` of about ${t.progress.estimatedRows}`;
        lines.push(`${t.table}: ${t.state === 'ready' ? 'full scan' : 'backfill'} at ${t.progress.rowsRead} records${of}, begun ${t.progress.startedAt}`);
      }
    }
  }
  const now = Date.parse(report.checkedAt);
  const { cycle } = report;
  lines.push('', `cycles: last success ${when(cycle.lastSuccessAt, now)}; last failure ${when(cycle.lastFailureAt, now)}`);
  if (cycle.lastFailure !== null && cycle.lastFailureAt !== null && (cycle.lastSuccessAt === null || cycle.lastFailureAt > cycle.lastSuccessAt)) {
    for (const problem of cycle.lastFailure.split('\n')) lines.push(`  ${say(problem)}`);
  }
  if (report.syncProcess !== null) {
    lines.push(`syncing: a wsmirror run or sync holds the mirror${report.syncProcess.heldBy === null ? '' : ` (${say(report.syncProcess.heldBy)})`}`);
  }
  if (cycle.nextRunAt !== null) lines.push(`next run: ${when(cycle.nextRunAt, now)}${Date.parse(cycle.nextRunAt) < now ? ' (overdue unless a cycle is running: is wsmirror run up?)' : ''}`);
  if (report.outbox === null) lines.push('', `outbox: ${say(report.outboxUnreadable ?? 'not readable')}`);
  else lines.push('', ...outboxLines(report, report.outbox));
  if (report.attention.length > 0) lines.push('', 'needs attention:', ...report.attention.map((a) => `  - ${say(a)}`));
  return `${lines.join('\n')}\n`;
}

/** The outbox's counts, those of tables no longer mirrored, and the edits that wait for a row. */
function outboxLines(report: StatusReport, counts: NonNullable<StatusReport['outbox']>): string[] {
  const { pending, failed, conflict, waiting } = counts;
  const oldest = report.oldestPendingAgeMs === null ? '' : ` (oldest pending edit ${formatDuration(report.oldestPendingAgeMs)} old)`;
  const lines = [`outbox: ${pending} pending, ${failed} failed, ${conflict} conflict${oldest}`];
  const listed = report.tables.reduce((n, t) => n + (t.outbox === null ? 0 : t.outbox.pending + t.outbox.failed + t.outbox.conflict), 0);
  const unlisted = pending + failed + conflict - listed;
  if (unlisted > 0) lines.push(`  (${unlisted} of them belong to tables no longer mirrored)`);
  if (waiting > 0) {
    const wait = waiting === 1 ? 'waits for a row' : 'wait for rows';
    lines.push(`  ${waiting} of the pending edits ${wait} inserted here to be created upstream (wsmirror outbox shows which)`);
  }
  return lines;
}

export function defineStatusCommand(program: Command): Command {
  return withConfigOption(
    program
      .command('status')
      .description('show each mirrored table (mode, state, rows, last pull, lag, last error, outbox) and the last cycles; ' +
        'exits 1 when something needs attention (reads only the mirror)')
      .option('--json', 'print the report as one JSON document'),
  ).action(async (flags: ConfigFlags & { json?: boolean }) => {
    const [{ openCommand }, { openConfiguredMirror }, { collectStatus }] = await Promise.all([
      import('../command-config.ts'),
      import('../../daemon/configured-mirror.ts'),
      import('../status-report.ts'),
    ]);
    // The upstream is not needed: a machine that only reads the mirror has no key.
    // stdout carries the report; logs (e.g. unknown WSMIRROR_* variables) go to stderr.
    const { config, logger } = openCommand(flags, { upstream: 'optional', toStderr: true });
    const mirror = await openConfiguredMirror(config, { logger, mustExist: true });
    try {
      const report = await collectStatus(mirror, {
        pgSchema: config.mirror.pgSchema,
        minFreeBytes: config.mirror.minFreeBytes,
        bounds: { maxLagMs: config.sync.maxLagMs, fullScanEveryMs: config.sync.fullScanEveryMs },
      });
      process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatStatusText(report));
      // A monitoring check: 0 = nothing needs attention, 1 = something does (listed).
      process.exitCode = report.attention.length === 0 ? EXIT.ok : EXIT.syncFailed;
    } finally {
      await mirror.close();
    }
  });
}
