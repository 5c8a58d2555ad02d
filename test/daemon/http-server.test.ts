import { afterEach, describe, expect, it } from 'vitest';
import { listenHttpServer, startHttpServer } from '../../src/daemon/http-server.ts';
import type { HttpServer } from '../../src/daemon/http-server.ts';
import { Metrics } from '../../src/daemon/metrics.ts';
import { evaluateReadiness } from '../../src/daemon/readiness.ts';
import type { ReadinessReport } from '../../src/daemon/readiness.ts';
import type { CycleOutcome } from '../../src/daemon/scheduler.ts';
import { sampleValue } from './metrics-text.ts';

const servers: HttpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(metrics: Metrics, readiness: () => ReadinessReport, redact?: (text: string) => string) {
  const server = await listenHttpServer('127.0.0.1', 0, { metrics, readiness, ...(redact ? { redact } : {}) });
  servers.push(server);
  return server;
}

function outcome(result: CycleOutcome['result'], error?: unknown): CycleOutcome {
  const startedAt = new Date('2026-01-01T00:00:00Z');
  return { result, startedAt, finishedAt: new Date(startedAt.getTime() + 1500), durationMs: 1500, ...(error ? { error } : {}) };
}

describe('operations HTTP server', () => {
  it('answers /healthz with 200 while the process lives', async () => {
    const server = await serve(new Metrics({ processMetrics: false }), () => ({ ready: false, reason: 'x' }));
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
    const head = await fetch(`${server.url}/healthz`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('answers /readyz with 200 or 503 and the reason as JSON', async () => {
    let now = Date.parse('2026-01-01T00:10:00Z');
    const metrics = new Metrics({ processMetrics: false, now: () => now });
    let last: CycleOutcome | undefined;
    const readiness = () => evaluateReadiness({ lastCycle: last, maxLag: metrics.maxLag({ maxLagMs: 300_000, fullScanEveryMs: 3_600_000 }) });
    const server = await serve(metrics, readiness);

    let res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ ready: false, reason: 'no cycle has finished yet' });

    last = outcome('failure', new Error('upstream answered 502'));
    res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ ready: false, reason: 'the last cycle failed: upstream answered 502' });

    last = outcome('success');
    metrics.setTableCurrentAsOf('crm.orders', now - 60_000);
    metrics.setTableCurrentAsOf('crm.people', now - 30_000);
    res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      ready: true,
      lastCycle: { result: 'success', startedAt: '2026-01-01T00:00:00.000Z', finishedAt: '2026-01-01T00:00:01.500Z', durationMs: 1500 },
      maxLag: { table: 'crm.orders', seconds: 60, boundSeconds: 300 },
    });

    now += 250_000; // crm.orders is now 310 s behind
    res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ ready: false, reason: 'table crm.orders lags upstream by 310 s (bound 300 s)' });
  });

  it('redacts what /readyz quotes from an error', async () => {
    const last = outcome('failure', new Error('bad key sk-0123456789'));
    const server = await serve(
      new Metrics({ processMetrics: false }),
      () => evaluateReadiness({ lastCycle: last, maxLag: null }),
      (text) => text.replaceAll('sk-0123456789', '[Redacted]'),
    );
    const body = await (await fetch(`${server.url}/readyz`)).text();
    expect(body).toContain('bad key [Redacted]');
    expect(body).not.toContain('sk-0123456789');
  });

  it('serves Prometheus text on /metrics, and the numbers move', async () => {
    let now = 1_000_000;
    const metrics = new Metrics({ now: () => now });
    const server = await serve(metrics, () => ({ ready: true }));
    const scrape = async () => {
      const res = await fetch(`${server.url}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      return res.text();
    };

    let text = await scrape();
    expect(sampleValue(text, 'wsmirror_cycles_total', { result: 'success' })).toBeUndefined();
    expect(sampleValue(text, 'wsmirror_last_success_timestamp_seconds')).toBe(0);
    expect(sampleValue(text, 'wsmirror_outbox_entries', { status: 'pending' })).toBe(0);
    expect(sampleValue(text, 'wsmirror_outbox_oldest_pending_age_seconds')).toBe(0);
    expect(sampleValue(text, 'wsmirror_process_resident_memory_bytes')).toBeGreaterThan(0);

    metrics.observeCycle('success', 2_500, 1_700_000_000_000);
    metrics.observeCycle('failure', 100);
    metrics.observeRowsApplied('crm.orders', 'upsert', 40);
    metrics.observeRowsApplied('crm.orders', 'upsert', 2);
    metrics.observeRowsApplied('crm.orders', 'delete', 3);
    metrics.setTableCurrentAsOf('crm.orders', now - 12_000);
    metrics.setOutboxDepth({ pending: 5, failed: 1 });
    metrics.setOldestPendingEdit(new Date(now - 30_000).toISOString());
    metrics.observeRequest({ endpoint: 'records.list', method: 'get', status: 200, durationMs: 30 });
    metrics.observeRequest({ endpoint: 'records.list', method: 'GET', status: 429, durationMs: 5 });
    metrics.observeRequest({ endpoint: 'records.patch', method: 'PATCH', status: 'error', durationMs: 30_000 });
    metrics.observeRetry({ endpoint: 'records.list', reason: '429' });

    text = await scrape();
    expect(sampleValue(text, 'wsmirror_cycles_total', { result: 'success' })).toBe(1);
    expect(sampleValue(text, 'wsmirror_cycles_total', { result: 'failure' })).toBe(1);
    expect(sampleValue(text, 'wsmirror_cycle_duration_seconds_count')).toBe(2);
    expect(sampleValue(text, 'wsmirror_cycle_duration_seconds_sum')).toBeCloseTo(2.6);
    expect(sampleValue(text, 'wsmirror_cycle_duration_seconds_bucket', { le: '0.1' })).toBe(1);
    expect(sampleValue(text, 'wsmirror_last_success_timestamp_seconds')).toBe(1_700_000_000);
    expect(sampleValue(text, 'wsmirror_rows_applied_total', { table: 'crm.orders', operation: 'upsert' })).toBe(42);
    expect(sampleValue(text, 'wsmirror_rows_applied_total', { table: 'crm.orders', operation: 'delete' })).toBe(3);
    expect(sampleValue(text, 'wsmirror_table_lag_seconds', { table: 'crm.orders' })).toBe(12);
    expect(sampleValue(text, 'wsmirror_outbox_entries', { status: 'pending' })).toBe(5);
    expect(sampleValue(text, 'wsmirror_outbox_entries', { status: 'failed' })).toBe(1);
    expect(sampleValue(text, 'wsmirror_outbox_entries', { status: 'conflict' })).toBe(0);
    expect(sampleValue(text, 'wsmirror_upstream_requests_total', { endpoint: 'records.list', method: 'GET', status: '200' })).toBe(1);
    expect(sampleValue(text, 'wsmirror_upstream_requests_total', { endpoint: 'records.list', method: 'GET', status: '429' })).toBe(1);
    expect(sampleValue(text, 'wsmirror_upstream_requests_total', { endpoint: 'records.patch', method: 'PATCH', status: 'error' })).toBe(1);
    expect(sampleValue(text, 'wsmirror_upstream_request_duration_seconds_count', { endpoint: 'records.list' })).toBe(2);
    expect(sampleValue(text, 'wsmirror_upstream_retries_total', { endpoint: 'records.list', reason: '429' })).toBe(1);

    // Lag is computed at scrape time: it grows while nothing is pulled, and a forgotten table leaves.
    now += 8_000;
    text = await scrape();
    expect(sampleValue(text, 'wsmirror_table_lag_seconds', { table: 'crm.orders' })).toBe(20);
    // So is the age of the oldest pending edit; none pending reads 0.
    expect(sampleValue(text, 'wsmirror_outbox_oldest_pending_age_seconds')).toBe(38);
    metrics.setOldestPendingEdit(null);
    expect(sampleValue(await scrape(), 'wsmirror_outbox_oldest_pending_age_seconds')).toBe(0);
    metrics.forgetTable('crm.orders');
    text = await scrape();
    expect(sampleValue(text, 'wsmirror_table_lag_seconds', { table: 'crm.orders' })).toBeUndefined();
  });

  it('answers 404 for other paths and 405 for other methods', async () => {
    const server = await serve(new Metrics({ processMetrics: false }), () => ({ ready: true }));
    expect((await fetch(`${server.url}/`)).status).toBe(404);
    const post = await fetch(`${server.url}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('is off when the configured port is 0, and closes cleanly with keep-alive clients', async () => {
    const deps = { metrics: new Metrics({ processMetrics: false }), readiness: () => ({ ready: true }) };
    expect(await startHttpServer({ host: '127.0.0.1', port: 0 }, deps)).toBeNull();
    const server = await listenHttpServer('127.0.0.1', 0, deps);
    await fetch(`${server.url}/healthz`); // leaves an idle keep-alive connection
    await server.close();
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });
});

describe('readiness rule', () => {
  it('is not ready while stopping or after an aborted cycle', () => {
    expect(evaluateReadiness({ lastCycle: outcome('success'), maxLag: null, stopping: true })).toMatchObject({
      ready: false,
      reason: 'the daemon is stopping',
    });
    expect(evaluateReadiness({ lastCycle: outcome('aborted'), maxLag: null }).reason).toBe('the last cycle was aborted');
    expect(evaluateReadiness({ lastCycle: outcome('success'), maxLag: null }).ready).toBe(true);
  });

  it('judges a cycle that runs long by lag, which grows while it runs, and shows since when it runs', () => {
    const pulledAt = Date.parse('2026-01-01T00:00:00Z');
    let now = pulledAt;
    const metrics = new Metrics({ processMetrics: false, now: () => now });
    metrics.setTables([{ table: 'crm.people', mode: 'history', currentAsOf: new Date(pulledAt) }]);
    const runningSince = new Date(pulledAt + 10_000);
    const readiness = () => evaluateReadiness({
      lastCycle: outcome('success'), maxLag: metrics.maxLag({ maxLagMs: 300_000, fullScanEveryMs: 3_600_000 }), runningSince, now,
    });
    now = pulledAt + 60_000;
    expect(readiness()).toMatchObject({ ready: true, runningCycle: { startedAt: '2026-01-01T00:00:10.000Z', seconds: 50 } });
    // Stuck past sync.maxLag: the table it has not pulled again lags beyond its bound.
    now = pulledAt + 301_000;
    expect(readiness()).toMatchObject({
      ready: false, reason: 'table crm.people lags upstream by 301 s (bound 300 s)', runningCycle: { seconds: 291 },
    });
    expect(evaluateReadiness({ lastCycle: outcome('success'), maxLag: null })).not.toHaveProperty('runningCycle');
  });
});
