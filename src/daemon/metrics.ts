/**
 * Prometheus metrics on a registry of their own (so tests and embedded daemons never share
 * state). The engine and the client report through the small typed methods below; they never
 * touch prom-client themselves.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { TableMode } from '../mirror/index.ts';
import { lagBoundMs, lastPullMs, tableLagMs } from '../sync/index.ts';

export type CycleResult = 'success' | 'failure' | 'aborted';
export type RowOperation = 'upsert' | 'delete';
export type OutboxStatus = 'pending' | 'failed' | 'conflict';

/** A table's lag behind upstream and the bound it is judged by, in seconds. */
export interface TableLag {
  table: string;
  seconds: number;
  boundSeconds: number;
}

export interface RequestObservation {
  /** A stable endpoint name such as `records.list`, never a URL (label cardinality). */
  endpoint: string;
  method: string;
  /** HTTP status, or `error` when no response arrived (network error, timeout, size bound). */
  status: number | 'error';
  durationMs: number;
}

export interface RetryObservation {
  endpoint: string;
  /** What caused it: `429`, `503`, `network`, `timeout`… */
  reason: string;
}

export interface MetricsOptions {
  /** Node process metrics (CPU, memory, event loop) under `wsmirror_`; default true. */
  processMetrics?: boolean;
  /** Clock for lag; tests move it. */
  now?: () => number;
}

export class Metrics {
  readonly registry: Registry;
  readonly #now: () => number;
  readonly #cycleDuration: Histogram<never>;
  readonly #cycles: Counter<'result'>;
  readonly #rowsApplied: Counter<'table' | 'operation'>;
  readonly #outbox: Gauge<'status'>;
  readonly #waiting: Gauge<never>;
  readonly #requests: Counter<'endpoint' | 'method' | 'status'>;
  readonly #requestDuration: Histogram<'endpoint'>;
  readonly #retries: Counter<'endpoint' | 'reason'>;
  readonly #lastSuccess: Gauge<never>;
  // Per table: the upstream time up to which it is known current. Lag is derived at scrape time,
  // so it keeps growing while the daemon is stuck.
  readonly #currentAsOf = new Map<string, number>();
  readonly #modes = new Map<string, TableMode>();
  /** How long each table's last pull took (sync/table-lag.ts `lastPullMs`): a full-scan table's bound includes it. */
  readonly #lastPullMs = new Map<string, number>();
  // Unix ms of the oldest pending local edit; its age is derived at scrape time.
  #oldestPendingAt: number | null = null;
  #lastSuccessAt: number | undefined;

  constructor(options: MetricsOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.registry = new Registry();
    const registers = [this.registry];
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'wsmirror_' });

    this.#cycleDuration = new Histogram({
      name: 'wsmirror_cycle_duration_seconds',
      help: 'Duration of sync cycles (schema, push, records).',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600],
      registers,
    });
    this.#cycles = new Counter({
      name: 'wsmirror_cycles_total',
      help: 'Sync cycles by result (success, failure, aborted by shutdown).',
      labelNames: ['result'],
      registers,
    });
    this.#rowsApplied = new Counter({
      name: 'wsmirror_rows_applied_total',
      help: 'Rows written to the mirror, by table (module.table) and operation (upsert, delete).',
      labelNames: ['table', 'operation'],
      registers,
    });
    const currentAsOf = this.#currentAsOf;
    const now = this.#now;
    // Registered only: its value is computed at scrape time from #currentAsOf.
    new Gauge({
      name: 'wsmirror_table_lag_seconds',
      help: 'Per table: seconds since the start of its last successful pull (the upstream state it holds); the LAG of wsmirror status.',
      labelNames: ['table'],
      registers,
      collect() {
        this.reset();
        for (const [table, asOf] of currentAsOf) this.set({ table }, tableLagMs(asOf, now())! / 1000);
      },
    });
    const metrics = this;
    new Gauge({
      name: 'wsmirror_outbox_oldest_pending_age_seconds',
      help: 'Seconds since the oldest local edit still pending was made (0 when none is pending).',
      registers,
      collect() {
        const at = metrics.#oldestPendingAt;
        this.set(at === null ? 0 : Math.max(0, (now() - at) / 1000));
      },
    });
    this.#outbox = new Gauge({
      name: 'wsmirror_outbox_entries',
      help: 'Local edits waiting in the outbox, by status (pending, failed, conflict).',
      labelNames: ['status'],
      registers,
    });
    this.#waiting = new Gauge({
      name: 'wsmirror_outbox_waiting_entries',
      help: 'Pending local edits that wait for a row inserted here to be created upstream (counted as pending in wsmirror_outbox_entries too).',
      registers,
    });
    this.#requests = new Counter({
      name: 'wsmirror_upstream_requests_total',
      help: 'Upstream HTTP requests by endpoint, method and status (error = no response).',
      labelNames: ['endpoint', 'method', 'status'],
      registers,
    });
    this.#requestDuration = new Histogram({
      name: 'wsmirror_upstream_request_duration_seconds',
      help: 'Upstream HTTP request duration by endpoint.',
      labelNames: ['endpoint'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.#retries = new Counter({
      name: 'wsmirror_upstream_retries_total',
      help: 'Upstream requests retried, by endpoint and reason.',
      labelNames: ['endpoint', 'reason'],
      registers,
    });
    this.#lastSuccess = new Gauge({
      name: 'wsmirror_last_success_timestamp_seconds',
      help: 'Unix time at which the last successful cycle ended (0 = none yet).',
      registers,
    });
    this.#lastSuccess.set(0);
    for (const status of ['pending', 'failed', 'conflict'] as const) this.#outbox.set({ status }, 0);
    this.#waiting.set(0);
  }

  /**
   * A SQLite mirror's -wal file, its size read at each scrape (`walBytes`): it grows while a
   * reader keeps a read transaction open, and nothing fails meanwhile. Registered for SQLite only.
   */
  watchSqliteWal(walBytes: () => number): void {
    new Gauge({
      name: 'wsmirror_sqlite_wal_bytes',
      help: 'Size of the SQLite mirror\'s -wal file in bytes (grows while a reader keeps a read transaction open).',
      registers: [this.registry],
      collect() {
        this.set(walBytes());
      },
    });
  }

  /** The scheduler calls this when a cycle ends. */
  observeCycle(result: CycleResult, durationMs: number, finishedAt: number = this.#now()): void {
    this.#cycleDuration.observe(durationMs / 1000);
    this.#cycles.inc({ result });
    if (result === 'success') {
      this.#lastSuccessAt = finishedAt;
      this.#lastSuccess.set(finishedAt / 1000);
    }
  }

  /** Rows upserted or deleted in the mirror for `module.table`. */
  observeRowsApplied(table: string, operation: RowOperation, count = 1): void {
    if (count > 0) this.#rowsApplied.inc({ table, operation }, count);
  }

  /**
   * After a table's pull commits: the start of that pull, the upstream state it holds
   * (sync/table-lag.ts), and when it ended (by default now).
   */
  setTableCurrentAsOf(table: string, asOf: Date | number, pulledAt: Date | number = this.#now()): void {
    this.#currentAsOf.set(table, typeof asOf === 'number' ? asOf : asOf.getTime());
    this.#lastPullMs.set(table, lastPullMs(asOf, pulledAt));
  }

  /** A table left the mirror (dropped upstream or excluded). */
  forgetTable(table: string): void {
    this.#currentAsOf.delete(table);
    this.#modes.delete(table);
    this.#lastPullMs.delete(table);
  }

  /**
   * The tables the mirror holds, with the time each is current as of as stored in the mirror:
   * a restarted daemon knows every table's lag at once; tables not listed (dropped from the
   * mirror) stop counting.
   */
  setTables(tables: readonly { table: string; mode?: TableMode; currentAsOf: Date | null; lastPullAt?: Date | null }[]): void {
    const keep = new Set(tables.map((t) => t.table));
    for (const table of [...this.#currentAsOf.keys()]) if (!keep.has(table)) this.forgetTable(table);
    for (const { table, mode, ...pulled } of tables) {
      if (mode !== undefined) this.#modes.set(table, mode);
      this.setTablePullState(table, pulled);
    }
  }

  /**
   * A table's last pull as the mirror records it (also after a pull was undone): the upstream
   * state it holds and when that pull ended; before its first pull no lag is known.
   */
  setTablePullState(table: string, { currentAsOf, lastPullAt }: { currentAsOf: Date | null; lastPullAt?: Date | null }): void {
    if (currentAsOf !== null) {
      this.setTableCurrentAsOf(table, currentAsOf, lastPullAt ?? currentAsOf);
      return;
    }
    this.#currentAsOf.delete(table);
    this.#lastPullMs.delete(table);
  }

  /**
   * The table furthest beyond its own lag bound (sync/table-lag.ts `lagBoundMs`: a full-scan table
   * may lag by a scan interval and its last scan's length more), with its lag and that bound, or null when no table has been
   * pulled yet: what `/readyz` judges by, as `wsmirror status` does.
   */
  maxLag(bounds: { maxLagMs: number; fullScanEveryMs: number }): TableLag | null {
    let worst: TableLag | null = null;
    let worstExcess = -Infinity;
    const now = this.#now();
    for (const [table, asOf] of this.#currentAsOf) {
      const seconds = tableLagMs(asOf, now)! / 1000;
      const boundSeconds = lagBoundMs(this.#modes.get(table) ?? 'history', bounds, this.#lastPullMs.get(table)) / 1000;
      if (seconds - boundSeconds > worstExcess) {
        worstExcess = seconds - boundSeconds;
        worst = { table, seconds, boundSeconds };
      }
    }
    return worst;
  }

  /** Unix ms of the last successful cycle's end, if any. */
  lastSuccessAt(): number | undefined {
    return this.#lastSuccessAt;
  }

  /** Outbox counts, before and after a push; statuses left out keep their value. */
  setOutboxDepth(depth: Partial<Record<OutboxStatus, number>>): void {
    for (const [status, count] of Object.entries(depth)) {
      if (typeof count === 'number') this.#outbox.set({ status }, count);
    }
  }

  /** Pending outbox entries that wait for a row inserted here to be created upstream, before and after a push. */
  setWaitingEdits(count: number): void {
    this.#waiting.set(count);
  }

  /** When the oldest pending local edit was made (ISO or Unix ms), or null when none is pending. */
  setOldestPendingEdit(at: string | number | null): void {
    const ms = typeof at === 'string' ? Date.parse(at) : at;
    this.#oldestPendingAt = ms === null || Number.isNaN(ms) ? null : ms;
  }

  /** The client calls this once per HTTP attempt. */
  observeRequest(info: RequestObservation): void {
    const labels = { endpoint: info.endpoint, method: info.method.toUpperCase(), status: String(info.status) };
    this.#requests.inc(labels);
    this.#requestDuration.observe({ endpoint: info.endpoint }, info.durationMs / 1000);
  }

  /** The client calls this before each retry. */
  observeRetry(info: RetryObservation): void {
    this.#retries.inc({ endpoint: info.endpoint, reason: info.reason });
  }

  /** The Prometheus text exposition. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

export function createMetrics(options?: MetricsOptions): Metrics {
  return new Metrics(options);
}
