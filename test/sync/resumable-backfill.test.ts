import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { mirrorRows, upstreamRows } from '../helpers/mirror-snapshot.ts';
import { daemonEnv, runWsmirror, type RunResult } from '../helpers/processes.ts';
import { startRewritingProxy, type RewritingProxy } from '../helpers/rewriting-proxy.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * An interrupted backfill goes on from its last committed page (issue: "a Ctrl-C costs at most
 * one page of work"): a real `wsmirror sync` is SIGKILLed after 30 %, 60 % and 90 % of the list
 * pages a whole backfill reads, upstream changes meanwhile (deletes below the position move every
 * offset), and the restarted sync reads fewer pages than a fresh one and converges.
 */
const FIELDS = [
  { name: 'name', type: 'string' as const, labels: { '': 'Name' } },
  { name: 'qty', type: 'number' as const, labels: { '': 'Qty' } },
];
const RECORDS = 20_000;
const rows = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ name: `row ${from + i}`, qty: from + i }));

forEachDialect('resumable backfill', (dialect) => {
  let h: SyncHarness | undefined;
  let proxy: RewritingProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    await h?.close();
  });

  for (const kind of ['history', 'plain'] as const) {
    it(`a ${kind} table's backfill killed at 30 %, 60 % and 90 % resumes with fewer pages and converges`, async () => {
      h = await startSyncHarness(dialect);
      proxy = await startRewritingProxy(h.emu.url);
      await h.upstream.createModule('big');
      await h.upstream.createTable('big', kind, { hasHistory: kind === 'history' }, FIELDS);
      const ids = await h.upstream.createRecords('big', kind, rows(RECORDS));

      // The scan's list pages (limit 100, no id filter), as the proxy sees them; `onPage` may kill.
      let pages = 0;
      let onPage = () => {};
      const listPath = `/modules/big/tables/${kind}/records?`;
      proxy.rewrite = (path) => {
        if (path.includes(listPath) && path.includes('limit=100') && !path.includes('filter=')) {
          pages++;
          onPage();
        }
        return undefined;
      };
      const env = (mirror: { url: string; pgSchema?: string | undefined }) =>
        daemonEnv({ ...h!.emu, url: proxy!.url }, mirror, { WSMIRROR_LOG_LEVEL: 'info' });

      const fresh = await dialect.fresh();
      const full = await runWsmirror(['sync'], env(fresh));
      expect(full.code, full.stderr).toBe(0);
      const freshPages = pages;
      expect(freshPages).toBeGreaterThan(RECORDS / 100);

      let deleted = 0;
      for (const share of [0.3, 0.6, 0.9]) {
        const mirror = await dialect.fresh();
        pages = 0;
        const killed = await new Promise<RunResult>((resolve) => {
          let kill = () => {};
          onPage = () => {
            if (pages >= Math.round(freshPages * share)) kill();
          };
          void runWsmirror(['sync'], env(mirror), { onSpawn: (k) => (kill = k) }).then(resolve);
        });
        onPage = () => {};
        expect(killed.signal, killed.stderr).toBe('SIGKILL');
        const [{ n }] = await mirror.sql<{ n: number | string }>(`SELECT count(*) AS n FROM ${mirror.table(`big__${kind}`)}`) as [{ n: number | string }];
        expect(Number(n)).toBeGreaterThan(0);

        // Upstream moves on while the daemon is down: deletes far below the position shift every
        // offset; an edit below it, records added at the end.
        const gone = ids.slice(deleted + 10, deleted + 260);
        deleted += 260;
        await h.upstream.deleteRecords('big', kind, gone);
        if (kind === 'history') await h.upstream.updateRecords('big', kind, [{ id: ids[5_000]!, qty: -5 }]);
        await h.upstream.createRecords('big', kind, rows(50, RECORDS + deleted));

        pages = 0;
        const resumed = await runWsmirror(['sync'], env(mirror));
        expect(resumed.code, resumed.stderr).toBe(0);
        expect(resumed.stdout).toContain('resuming the scan after its last committed page');
        // What was committed before the kill is not read again. Lost: the batch being written and
        // the one being filled (each up to the mirror's batch of rows), the pages in flight, and a
        // few steps back over the deleted records.
        const slack = 2 * Math.ceil(mirror.mirror.preferredBatchRows / 99) + 4 + 4 + 2;
        expect(pages, `${share}: ${pages} pages after the restart, ${freshPages} fresh`).toBeLessThan(freshPages * (1 - share) + slack);
        expect(pages).toBeLessThan(freshPages);
        if (kind === 'history') {
          // The catch-up from the cursor taken before the first page brings what changed meanwhile.
          await h.expectConverged('big', kind, mirror);
        } else {
          // Without history, records deleted upstream behind the scan's position while it was down
          // go at the next full scan, as for any change behind a scan; everything else is current.
          const expected = upstreamRows(await h.upstream.allRecords('big', kind), { name: 'string', qty: 'number' });
          const actual = await mirrorRows(mirror, 'big', kind);
          expect([...actual.keys()].filter((id) => !expected.has(id)).sort()).toEqual(gone.sort());
          for (const id of gone) actual.delete(id);
          expect(Object.fromEntries(actual)).toEqual(Object.fromEntries(expected));
          const next = await runWsmirror(['sync'], env(mirror));
          expect(next.code, next.stderr).toBe(0);
          await h.expectConverged('big', kind, mirror);
        }
      }
    }, 300_000);
  }

  it('Ctrl-C (SIGINT) halfway costs no more than the pages in flight', async () => {
    h = await startSyncHarness(dialect);
    proxy = await startRewritingProxy(h.emu.url);
    await h.upstream.createModule('big');
    await h.upstream.createTable('big', 'calm', { hasHistory: true }, FIELDS);
    await h.upstream.createRecords('big', 'calm', rows(RECORDS));
    let pages = 0;
    let onPage = () => {};
    proxy.rewrite = (path) => {
      if (path.includes('/modules/big/tables/calm/records?') && path.includes('limit=100') && !path.includes('filter=')) {
        pages++;
        onPage();
      }
      return undefined;
    };
    const mirror = await dialect.fresh();
    const env = daemonEnv({ ...h.emu, url: proxy.url }, mirror, { WSMIRROR_LOG_LEVEL: 'info' });
    let child: import('node:child_process').ChildProcess | undefined;
    let interrupted = false;
    onPage = () => {
      if (!interrupted && pages >= 100) {
        interrupted = true;
        child?.kill('SIGINT');
      }
    };
    const stopped = await runWsmirror(['sync'], env, { onSpawn: (_kill, c) => (child = c) });
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toContain('SIGINT');
    const readBefore = pages;
    pages = 0;
    const resumed = await runWsmirror(['sync'], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    const fresh = Math.ceil(RECORDS / 99) + 1;
    // Every page handed to the writer before the signal was written: only the pages requested
    // ahead (sync.backfillConcurrency, 4, as counted when asked for, some in flight), the size
    // estimate's page and the overlap are read again — never a batch of rows.
    expect(pages, `${readBefore} pages before the signal, ${pages} after`).toBeLessThanOrEqual(fresh - readBefore + 2 * 4 + 2);
    await h.expectConverged('big', 'calm', mirror);
  }, 120_000);
});
