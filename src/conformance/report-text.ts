import type { CheckResult, ConformanceReport } from './run-suite.ts';

/** The human report: one line per check as it ends, details under failures and observations. */
export function resultLines(result: CheckResult): string[] {
  if (result.outcome === 'pass') return [`pass  ${result.id}`];
  if (result.outcome === 'observation') {
    const o = result.observation!;
    return [
      `note  ${result.id}  (not shown in the API description; observed, not judged)`,
      `      observed: ${o.observed}`,
      `      emulator: ${o.emulatorChoice}${o.asEmulator ? ' (same)' : ' (differs)'}`,
    ];
  }
  const f = result.failure!;
  const lines = [`FAIL  ${result.id}`, `      rule: ${result.rule}`, `      failed: ${f.message}`];
  if (f.request) lines.push(`      request: ${f.request.method} ${f.request.target}${f.request.body === undefined ? '' : ` ${f.request.body}`}`);
  if (f.expected !== undefined) lines.push(`      expected: ${f.expected}`);
  if (f.actual !== undefined) lines.push(`      actual:   ${f.actual}`);
  return lines;
}

/** The closing lines; the last is always `N passed, N failed`. */
export function summaryLines(report: ConformanceReport): string[] {
  const lines: string[] = [];
  if (report.leftoversRemoved.length > 0) lines.push(`removed ${report.leftoversRemoved.length} scratch table(s) left by earlier runs that have ended`);
  if (report.otherRunsKept.length > 0) lines.push(`left ${report.otherRunsKept.length} scratch table(s) of other runs alone: they may still be running (their time limit has not passed)`);
  for (const f of report.cleanupFailures) lines.push(`could not delete scratch table ${report.module}.${f.name}: ${f.error}`);
  if (report.interrupted) {
    const why = report.timeLimitReached ? 'stopped at the time limit (--time-limit)' : 'interrupted';
    lines.push(`${why}: ${report.results.length} check(s) ran; the scratch tables of this run were deleted`);
  }
  const notes = report.observations === 0 ? '' : ` (${report.observations} observation${report.observations === 1 ? '' : 's'})`;
  lines.push(`${report.requests} requests${report.rateLimited === 0 ? '' : `, ${report.rateLimited} rate-limited and repeated`}${notes}`);
  lines.push(`${report.passed} passed, ${report.failed} failed`);
  return lines;
}
