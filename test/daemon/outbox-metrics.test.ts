import { afterEach, expect, it } from 'vitest';
import { createCycleObserver } from '../../src/daemon/cycle-observer.ts';
import { listenHttpServer, type HttpServer } from '../../src/daemon/http-server.ts';
import { Metrics } from '../../src/daemon/metrics.ts';
import { SyncEngine } from '../../src/sync/index.ts';
import { forEachDialect } from '../helpers/dialects.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';
import { editsWaitingForARefusedRow } from '../helpers/waiting-edits.ts';
import { sampleValue } from './metrics-text.ts';

/** The outbox as /metrics shows it after a cycle, from a mirror of each dialect, scraped over HTTP. */
forEachDialect('/metrics: the outbox after a cycle', (dialect) => {
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
});
