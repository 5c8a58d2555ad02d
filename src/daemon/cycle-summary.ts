/**
 * One line per cycle for the log: how many tables, rows in (pulled into the mirror) and out
 * (local edits pushed upstream), how long, and what failed. On a terminal it is the line a person
 * reads; in JSON its fields are there for a log pipeline.
 */
import type { CycleReport } from '../sync/index.ts';
import { formatCount, formatDuration } from './units.ts';

export interface CycleSummary {
  tables: number;
  failedTables: number;
  upserted: number;
  deleted: number;
  pushed: number;
  /** Local edits upstream refused this cycle, and those found in conflict (they stay in the outbox). */
  editsFailed: number;
  editsInConflict: number;
  durationMs: number;
}

export function summarizeCycle(report: CycleReport): { summary: CycleSummary; text: string } {
  const summary: CycleSummary = {
    tables: report.tables.length,
    failedTables: report.tables.filter((t) => t.action === 'failed').length,
    upserted: report.tables.reduce((sum, t) => sum + t.upserted, 0),
    deleted: report.tables.reduce((sum, t) => sum + t.deleted, 0),
    pushed: report.push.pushed,
    editsFailed: report.push.failed,
    editsInConflict: report.push.conflict,
    durationMs: report.durationMs,
  };
  const rowsIn = summary.upserted + summary.deleted;
  const parts = [
    `${summary.tables} ${summary.tables === 1 ? 'table' : 'tables'}`,
    `${formatCount(rowsIn)} ${rowsIn === 1 ? 'row' : 'rows'} in (${formatCount(summary.upserted)} upserted, ${formatCount(summary.deleted)} deleted)`,
    `${formatCount(summary.pushed)} ${summary.pushed === 1 ? 'edit' : 'edits'} out`,
  ];
  const problems = [
    ...(summary.failedTables > 0 ? [`${summary.failedTables} failed`] : []),
    ...[refusedEdits(summary)].filter((t) => t !== ''),
    ...(report.push.error !== undefined ? ['push failed'] : []),
  ];
  const text = `cycle ${report.ok ? 'done' : 'ended with problems'} in ${formatDuration(summary.durationMs)}: ${parts.join(', ')}${problems.length > 0 ? `; ${problems.join(', ')}` : ''}`;
  return { summary, text };
}

/**
 * Local edits upstream refused this cycle, or found in conflict: they stay in the outbox for a
 * person to retry or discard (the cycle itself succeeded, so it is `done`).
 */
function refusedEdits({ editsFailed, editsInConflict }: CycleSummary): string {
  const parts = [
    ...(editsFailed > 0 ? [`${formatCount(editsFailed)} ${editsFailed === 1 ? 'edit' : 'edits'} failed`] : []),
    ...(editsInConflict > 0 ? [`${formatCount(editsInConflict)} in conflict`] : []),
  ];
  return parts.length === 0 ? '' : `${parts.join(', ')} (wsmirror outbox)`;
}
