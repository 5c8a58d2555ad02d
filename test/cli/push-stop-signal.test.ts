import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { forEachDialect, questionMarkSql } from '../helpers/dialects.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { startWsmirrorKilledAfterEach } from '../helpers/live-daemons.ts';
import { daemonEnv } from '../helpers/processes.ts';
import { startRewritingProxy, type RewritingProxy } from '../helpers/rewriting-proxy.ts';
import { field } from '../helpers/schema.ts';
import { within } from '../helpers/within.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * SIGTERM while a push request is being retried (upstream answers every record write 503, so the
 * client backs off and sends it again): the push stops at once, as docs/operations.md ("A stopped
 * push") says: no further request reaches upstream, and `run` exits well within Docker's 10 s.
 */
forEachDialect('wsmirror run: SIGTERM during a push\'s retries', ({ fresh }) => {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-push-stop-'));
  const startWsmirror = startWsmirrorKilledAfterEach();
  let emu: RunningEmulator;
  let proxy: RewritingProxy;
  beforeAll(async () => {
    emu = await startEmulator();
    proxy = await startRewritingProxy(emu.url);
    const upstream = new UpstreamWorkspace(emu);
    await upstream.createModule('crm');
    await upstream.createTable('crm', 'people', { hasHistory: true }, [field('name', 'string')]);
    await upstream.createRecords('crm', 'people', [{ name: 'Ada' }, { name: 'Grace' }]);
  });
  afterEach(() => {
    proxy.rewrite = undefined;
  });
  afterAll(async () => {
    await proxy?.close();
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends no further request and exits within 2 s', async () => {
    const tm = await fresh();
    const daemon = startWsmirror(['run'], daemonEnv({ ...emu, url: proxy.url }, tm, {
      WSMIRROR_SCHEDULE: '2s', WSMIRROR_LOG_LEVEL: 'info',
    }), { killAfterMs: 60_000, cwd: dir });
    await daemon.waitFor('a first cycle', (stdout) => stdout.includes('"msg":"cycle done'));

    // Every record write fails with 503: the client retries it (6 times by default, backing off).
    proxy.rewrite = (path, _body, { method }) => (method !== 'GET' && /\/records(\?|$)/.test(path) ? { status: 503 } : undefined);
    await questionMarkSql(tm)(`UPDATE ${tm.table('crm__people')} SET name = ? WHERE id = ?`, ['Ada Lovelace', 1]);
    const retrying = /"endpoint":"updateRecords"[^\n]*"attempt":2,[^\n]*"msg":"upstream request failed; retrying"/;
    await daemon.waitFor('the push retrying its update', (stdout) => retrying.test(stdout));

    const signalledAt = performance.now();
    daemon.child.kill('SIGTERM');
    const result = await within(30_000, 'the daemon\'s exit', daemon.exited);
    const exitMs = performance.now() - signalledAt;
    // A request already on its way when the signal came may arrive a moment later; none is sent after.
    const late = proxy.seen.filter((r) => r.at > signalledAt + 50).map((r) => `${r.method} ${r.path} at +${Math.round(r.at - signalledAt)} ms`);
    expect(late).toEqual([]);
    expect(exitMs).toBeLessThan(2_000);
    expect(result.code, result.stderr).toBe(0);
  }, 90_000);
});
