import type { EndpointName } from '../api/index.ts';
import { CheckFailure, type CheckContext, type ConformanceCheck } from './check.ts';
import { ALL_CHECKS } from './checks/index.ts';
import { Probe, type EndpointTarget, type Exchange, type ProbeRequest } from './probe.ts';
import { ScratchTables, newRunId, scratchName, sweepScratchTables, type SweepResult } from './scratch.ts';

export interface ConformanceOptions {
  target: EndpointTarget;
  /** An existing module: every scratch table is made in it. */
  module: string;
  /** Requests per second at most; 0 = unbounded. */
  rate: number;
  /** Default: every check. */
  checks?: readonly ConformanceCheck[];
  /** Stops the run between two requests; the scratch tables are still deleted. */
  signal?: AbortSignal;
  /** Called as each check ends (a progress line per check). */
  onResult?: (result: CheckResult) => void;
  /** Called once leftovers of earlier runs are gone, before the first check. */
  onLeftovers?: (sweep: SweepResult) => void;
  runId?: string;
}

/** What a failed check shows: the rule's words, the request, the expected and the actual. */
export interface FailureDetail {
  message: string;
  expected?: string;
  actual?: string;
  request?: { method: string; target: string; body?: string };
  status?: number;
}

export interface CheckResult {
  id: string;
  section: string;
  rule: string;
  outcome: 'pass' | 'fail' | 'observation';
  durationMs: number;
  failure?: FailureDetail;
  observation?: { observed: string; emulatorChoice: string; asEmulator: boolean };
}

export interface ConformanceReport {
  runId: string;
  module: string;
  workspaceId: string;
  results: CheckResult[];
  passed: number;
  failed: number;
  observations: number;
  /** Set when a signal stopped the run before every check ran. */
  interrupted: boolean;
  /** Scratch tables of earlier, interrupted runs, removed before the first check. */
  leftoversRemoved: string[];
  /** Scratch tables that could not be deleted at the end (should be empty). */
  cleanupFailures: { name: string; error: string }[];
  requests: number;
  rateLimited: number;
}

/** A problem that stops the run before any check: the module is missing, the key is refused. */
export class ConformanceSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConformanceSetupError';
  }
}

// Cleanup runs after an interruption too: it gets its own time, not the stopped run's signal.
const CLEANUP_TIMEOUT_MS = 120_000;

/**
 * Runs the checks one after another against the endpoint. First removes scratch tables that
 * interrupted earlier runs left in the module; after each check deletes that check's tables;
 * at the end (also when stopped) deletes whatever of this run is still there.
 */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const runId = options.runId ?? newRunId();
  const probe = new Probe(options.target, { rate: options.rate });
  const report: ConformanceReport = {
    runId, module: options.module, workspaceId: probe.workspaceId, results: [], passed: 0, failed: 0, observations: 0,
    interrupted: false, leftoversRemoved: [], cleanupFailures: [], requests: 0, rateLimited: 0,
  };
  try {
    await preflight(probe, options.module, options.signal);
    const leftovers = await sweepScratchTables(probe, options.module, (id) => id !== runId, options.signal);
    report.leftoversRemoved = leftovers.deleted;
    report.cleanupFailures.push(...leftovers.failed);
    options.onLeftovers?.(leftovers);
    for (const check of options.checks ?? ALL_CHECKS) {
      if (options.signal?.aborted) break;
      const result = await runCheck(check, probe, options.module, runId, options.signal);
      if (result === 'interrupted') break;
      report.results.push(result);
      report[result.outcome === 'pass' ? 'passed' : result.outcome === 'fail' ? 'failed' : 'observations']++;
      options.onResult?.(result);
    }
  } finally {
    report.interrupted = options.signal?.aborted === true;
    try {
      const last = await sweepScratchTables(probe, options.module, (id) => id === runId, AbortSignal.timeout(CLEANUP_TIMEOUT_MS));
      report.cleanupFailures.push(...last.failed);
    } catch (error) {
      report.cleanupFailures.push({ name: scratchName(runId, '*'), error: error instanceof Error ? error.message : String(error) });
    }
    report.requests = probe.stats.requests;
    report.rateLimited = probe.stats.rateLimited;
    await probe.close();
  }
  return report;
}

/** The module must exist and the key must be accepted; anything else is no check's fault. */
async function preflight(probe: Probe, module: string, signal: AbortSignal | undefined): Promise<void> {
  let res: Exchange;
  try {
    res = await probe.send('listTables', { params: { moduleName: module } }, signal);
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ConformanceSetupError(`the endpoint cannot be reached: ${probe.redact(error instanceof Error ? error.message : String(error))}`);
  }
  if (res.status === 401) throw new ConformanceSetupError('the endpoint refused the API key (HTTP 401)');
  if (res.status === 404) throw new ConformanceSetupError(`--module ${module}: the workspace has no module of that name (HTTP 404); name an existing module to create the scratch tables in`);
  if (res.status < 200 || res.status > 299) throw new ConformanceSetupError(`listing the tables of module ${module} answered HTTP ${res.status}`);
}

async function runCheck(
  check: ConformanceCheck, probe: Probe, module: string, runId: string, signal: AbortSignal | undefined,
): Promise<CheckResult | 'interrupted'> {
  const send = <N extends EndpointName>(endpoint: N, request: ProbeRequest = {}) =>
    probe.send(endpoint, { ...request, params: { moduleName: module, ...request.params } }, signal);
  const scratch = new ScratchTables(send, module, runId);
  const ctx: CheckContext = { module, scratch, missingName: scratchName(runId, 'missing'), send };
  const started = performance.now();
  const base = { id: check.id, section: check.section, rule: check.rule };
  let result: CheckResult;
  try {
    const observed = await check.run(ctx);
    result = observed
      ? { ...base, outcome: 'observation', durationMs: 0, observation: { ...observed, observed: probe.redact(observed.observed), emulatorChoice: check.emulatorChoice ?? '' } }
      : { ...base, outcome: 'pass', durationMs: 0 };
  } catch (error) {
    // Its tables go in the run's last sweep, which lists the module by this run's prefix.
    if (signal?.aborted) return 'interrupted';
    result = { ...base, outcome: 'fail', durationMs: 0, failure: failureDetail(error, probe) };
  }
  try {
    await scratch.removeAll();
  } catch (error) {
    // The last sweep retries it; a check that passed still says its tables would not go.
    if (result.outcome !== 'fail') result = { ...base, outcome: 'fail', durationMs: 0, failure: failureDetail(error, probe) };
  }
  result.durationMs = Math.round(performance.now() - started);
  return result;
}

/** What a failed check reports; an endpoint that echoes the key back never gets it printed. */
function failureDetail(error: unknown, probe: Probe): FailureDetail {
  const r = (text: string) => probe.redact(text);
  if (error instanceof CheckFailure) {
    const ex = error.exchange;
    return {
      message: r(error.message), expected: r(error.expected), actual: r(error.actual),
      ...(ex ? { request: { method: ex.method, target: r(ex.target), ...(ex.requestBody === undefined ? {} : { body: r(ex.requestBody) }) }, status: ex.status } : {}),
    };
  }
  return { message: r(error instanceof Error ? error.message : String(error)) };
}
