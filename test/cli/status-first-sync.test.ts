import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { forEachDialect, type TestMirror } from '../helpers/dialects.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, mirrorEnv, runWsmirror } from '../helpers/processes.ts';
import { startRewritingProxy, type RewritingProxy } from '../helpers/rewriting-proxy.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * `wsmirror status` on a mirror whose first sync never completed: stopped by Ctrl-C mid-backfill,
 * or after the backfill and before the catch-up poll that makes its rows current. No monitor may
 * pass it (exit 1, saying what to do), and no table shows `ready` before its first pull ended,
 * unless a wsmirror process holds the mirror now: then the first cycle is under way.
 */
interface StatusJson {
  tables: { table: string; state: string; status: string; lastPullAt: string | null; progress: { percent: number | null } | null }[];
  cycle: { lastSuccessAt: string | null };
  syncProcess: { heldBy: string | null } | null;
  attention: string[];
}

const FIELDS = [{ name: 'name', type: 'string' as const, labels: { '': 'Name' } }];
const NEVER_PULLED = 's.big has never been pulled to a current state (a sync stopped before it was): run wsmirror sync, or start the daemon (wsmirror run), and let a cycle complete';
const NO_CYCLE = 'no cycle has completed yet (no sync has run to its end): run wsmirror sync, or start the daemon (wsmirror run), and let a cycle complete';

forEachDialect('wsmirror status after an interrupted first sync (real processes)', ({ fresh }) => {
  let emu: RunningEmulator;
  let proxy: RewritingProxy;
  let t: TestMirror;
  let env: Record<string, string>;

  beforeAll(async () => {
    emu = await startEmulator();
    proxy = await startRewritingProxy(emu.url);
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('s');
    await ws.createTable('s', 'big', { hasHistory: true }, FIELDS);
    await ws.createRecords('s', 'big', Array.from({ length: 3_000 }, (_, i) => ({ name: `row ${i}` })));
    t = await fresh();
    env = daemonEnv({ ...emu, url: proxy.url }, t);
  });
  afterAll(async () => {
    await proxy?.close();
    await emu?.close();
  });

  const status = async () => {
    const text = await runWsmirror(['status'], mirrorEnv(t));
    const json = await runWsmirror(['status', '--json'], mirrorEnv(t));
    expect(text.code).toBe(json.code);
    return { code: json.code, text: text.stdout, json: JSON.parse(json.stdout) as StatusJson };
  };
  /** A scan page of the big table past its first thousand records. */
  const laterPage = (path: string) => {
    const offset = /[?&]offset=(\d+)/.exec(path);
    return path.includes('/tables/big/records?') && path.includes('limit=100') && offset !== null && Number(offset[1]) >= 1_000;
  };

  it('Ctrl-C mid-backfill: backfilling, no cycle ever, exit 1 saying to run a sync', async () => {
    let child: ChildProcess | undefined;
    let sent = false;
    proxy.rewrite = (path) => {
      // Once: a second Ctrl-C exits at once, without the graceful stop.
      if (laterPage(path) && !sent) sent = child?.kill('SIGINT') === true;
      return undefined;
    };
    const stopped = await runWsmirror(['sync'], env, { onSpawn: (_kill, c) => (child = c) });
    proxy.rewrite = undefined;
    expect(stopped.code, stopped.stderr).toBe(1);
    expect(stopped.stderr).toContain('stopped by SIGINT');

    const { code, text, json } = await status();
    expect(code, text).toBe(1);
    expect(json.cycle.lastSuccessAt).toBeNull();
    expect(json.syncProcess).toBeNull();
    expect(json.tables[0]).toMatchObject({ table: 's.big', state: 'needs_backfill', status: 'backfilling', lastPullAt: null });
    expect(json.attention).toEqual([NEVER_PULLED, NO_CYCLE]);
    expect(text).toContain('cycles: last success never');
    expect(text).toContain(`needs attention:\n  - ${NEVER_PULLED}\n  - ${NO_CYCLE}`);
  }, 120_000);

  it('while a daemon holds the mirror in its first cycle: the backfill is under way, exit 0', async () => {
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    let reached = () => {};
    const atPage = new Promise<void>((r) => (reached = r));
    proxy.rewrite = async (path) => {
      if (laterPage(path)) {
        reached();
        await held;
      }
      return undefined;
    };
    let child: ChildProcess | undefined;
    const running = runWsmirror(['run'], { ...env, WSMIRROR_SCHEDULE: '1h' }, { onSpawn: (_kill, c) => (child = c) });
    await atPage;
    try {
      const { code, text, json } = await status();
      expect(code, text).toBe(0);
      expect(json.syncProcess).not.toBeNull();
      expect(json.tables[0]).toMatchObject({ table: 's.big', status: 'backfilling' });
      expect(json.attention).toEqual([]);
      expect(text).toMatch(/^syncing: a wsmirror run or sync holds the mirror/m);
    } finally {
      proxy.rewrite = undefined;
      release();
    }
    // Its first cycle completes: ready, nothing under way once it stopped.
    let json: StatusJson | undefined;
    for (let i = 0; i < 120 && !json?.cycle.lastSuccessAt; i++) {
      await new Promise((r) => setTimeout(r, 500));
      json = (await status()).json;
    }
    child!.kill('SIGTERM');
    expect((await running).code).toBe(0);
    const after = await status();
    expect(after.code, after.text).toBe(0);
    expect(after.json.syncProcess).toBeNull();
    expect(after.json.tables[0]).toMatchObject({ status: 'ready' });
  }, 120_000);

  it('stopped after the backfill, before the catch-up poll: not ready, exit 1', async () => {
    // The state such a stop leaves: every record read (state ready), no pull ended.
    await t.sql(`UPDATE ${t.table('_wsmirror_tables')} SET "last_pull_at" = NULL, "current_as_of" = NULL`);
    const { code, text, json } = await status();
    expect(code, text).toBe(1);
    expect(json.tables[0]).toMatchObject({ table: 's.big', state: 'ready', status: 'backfilling', lastPullAt: null, progress: null });
    expect(json.attention).toEqual([NEVER_PULLED]);
    const cells = text.split('\n').find((l) => l.startsWith('s.big '))!.split(/ {2,}/);
    expect(cells.slice(3, 7)).toEqual(['backfilling', '3000', '-', 'never']);
  }, 60_000);
});
