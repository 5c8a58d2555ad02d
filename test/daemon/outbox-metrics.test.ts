import { afterEach, expect, it } from 'vitest';
import { createCycleObserver } from '../../src/daemon/cycle-observer.ts';
import { listenHttpServer, type HttpServer } from '../../src/daemon/http-server.ts';
import { Metrics } from '../../src/daemon/metrics.ts';
import { SyncEngine } from '../../src/sync/index.ts';
import { forEachDialect, questionMarkSql } from '../helpers/dialects.ts';
import { field } from '../helpers/schema.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';
import { editsWaitingForARefusedRow } from '../helpers/waiting-edits.ts';
import { sampleValue } from './metrics-text.ts';

/** The outbox as /metrics shows it during and after a cycle, from a mirror of each dialect, scraped over HTTP. */
forEachDialect('/metrics: the outbox of a cycle', (dialect) => {
  let h: SyncHarness | undefined;
  let server: HttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    await h?.close();
  });

  it('counts the pending edits that wait for another row\'s create, beside the entries by status', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await editsWaitingForARefusedRow(h);
    const metrics = new Metrics({ processMetrics: false });
    server = await listenHttpServer('127.0.0.1', 0, { metrics, readiness: () => ({ ready: true }) });
    const scrape = async () => (await fetch(`${server!.url}/metrics`)).text();
    expect(sampleValue(await scrape(), 'wsmirror_outbox_waiting_entries')).toBe(0);

    // The cycle pushes the edit that waits for nothing; the three waiting for the refused company stay.
    const engine = new SyncEngine({ client: h.client, mirror: h.tm.mirror, options: { lookbackMs: 0 }, observer: createCycleObserver({ metrics }) });
    await engine.runCycle();
    const text = await scrape();
    expect(sampleValue(text, 'wsmirror_outbox_entries', { status: 'pending' })).toBe(3);
    expect(sampleValue(text, 'wsmirror_outbox_entries', { status: 'failed' })).toBe(1);
    expect(sampleValue(text, 'wsmirror_outbox_waiting_entries')).toBe(3);
    expect(text).toContain('# HELP wsmirror_outbox_waiting_entries ');
  }, 60_000);

  it('counts the outbox before the push too: a push that runs long does not leave the last cycle\'s count', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'people', { hasHistory: true }, [field('name', 'string')]);
    const metrics = new Metrics({ processMetrics: false });
    server = await listenHttpServer('127.0.0.1', 0, { metrics, readiness: () => ({ ready: true }) });
    const scrape = async () => (await fetch(`${server!.url}/metrics`)).text();
    const engine = new SyncEngine({ client: h.client, mirror: h.tm.mirror, options: { lookbackMs: 0 }, observer: createCycleObserver({ metrics }) });
    expect((await engine.runCycle()).ok).toBe(true);
    expect(sampleValue(await scrape(), 'wsmirror_outbox_entries', { status: 'pending' })).toBe(0);

    const sql = questionMarkSql(h.tm);
    for (const name of ['Ada', 'Grace', 'Edsger']) await sql(`INSERT INTO ${h.tm.table('crm__people')} (name) VALUES (?)`, [name]);
    // Each answer takes a second: the push (after the schema poll) is out for a while.
    await h.upstream.setFaults({ latencyMs: 1_000 });
    let ended = false;
    const cycle = engine.runCycle().finally(() => {
      ended = true;
    });
    let pendingDuringPush: number | undefined;
    while (!ended && pendingDuringPush !== 3) {
      pendingDuringPush = sampleValue(await scrape(), 'wsmirror_outbox_entries', { status: 'pending' });
      await new Promise((r) => setTimeout(r, 50));
    }
    const stillRunning = !ended;
    expect((await cycle).ok).toBe(true);
    expect({ pendingDuringPush, stillRunning }).toEqual({ pendingDuringPush: 3, stillRunning: true });
    // Once pushed, the count after the push.
    expect(sampleValue(await scrape(), 'wsmirror_outbox_entries', { status: 'pending' })).toBe(0);
  }, 60_000);
});
