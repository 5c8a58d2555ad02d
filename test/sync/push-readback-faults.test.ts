import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import { WorkspaceClient } from '../../src/client/index.ts';
import { SyncEngine } from '../../src/sync/index.ts';
import { forEachDialect, questionMarkSql } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { mirrorEnv, runWsmirror } from '../helpers/processes.ts';
import { field } from '../helpers/schema.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

const isCreate = (method: string, path: string) => method === 'POST' && /\/records(\?|$)/.test(path);

/**
 * The read-back of creates whose answer did not come (docs/sync.md, "Exactly once"), through a
 * real proxy in front of the emulator: it never binds a local row to a record made for another
 * local row, and it does not look for a create whose request may still be on its way upstream.
 */
forEachDialect('push: read-back of unanswered creates', (dialect) => {
  let h: SyncHarness;
  let slow: WorkspaceClient | undefined;
  afterEach(async () => {
    await slow?.close();
    slow = undefined;
    await h?.close();
  });

  async function itemsTable(hasHistory: boolean): Promise<string> {
    await h.upstream.createModule('chaos');
    await h.upstream.createTable('chaos', 'items', { hasHistory }, [field('title', 'string'), field('score', 'number')]);
    await h.sync();
    return h.tm.table((await catalogEntry(h.tm, 'chaos', 'items'))!.sqlName);
  }

  for (const hasHistory of [true, false]) {
    it(`never binds a row to a record created for another local row (history ${hasHistory})`, async () => {
      // The default lookback (the first record is in the read-back's window), and a short
      // backoff: the creates the 500 met are due again soon after.
      h = await startSyncHarness(dialect, { pushRetryBaseMs: 200, pushRetryMaxMs: 200 }, { proxy: true });
      const table = await itemsTable(hasHistory);
      const run = questionMarkSql(h.tm);
      await run(`INSERT INTO ${table} (title, score) VALUES (?, ?)`, ['same', 5]);
      await h.sync();
      expect((await h.upstream.allRecords('chaos', 'items')).map((r) => r.values)).toEqual([{ title: 'same', score: 5 }]);

      // The same values again, and a row whose values the first record holds all of: their
      // POST is answered 500 and never reaches upstream.
      await run(`INSERT INTO ${table} (title, score) VALUES (?, ?)`, ['same', 5]);
      await run(`INSERT INTO ${table} (title) VALUES (?)`, ['same']);
      h.proxy!.intercept = ({ method, path }) => (isCreate(method, path) ? { status: 500, body: '{"error":{"message":"boom"}}' } : undefined);
      await h.sync({ allowFailure: true });
      h.proxy!.intercept = undefined;
      await sleep(250);
      await h.sync();

      const values = (await h.upstream.allRecords('chaos', 'items')).map((r) => r.values);
      expect(values).toEqual([{ title: 'same', score: 5 }, { title: 'same', score: 5 }, { title: 'same', score: null }]);
      expect(await h.tm.sql(`SELECT * FROM ${h.tm.table('_wsmirror_outbox')}`)).toEqual([]);
      await h.expectConverged('chaos', 'items');
    }, 60_000);

    it(`creates a row once when upstream applies its POST after the client gave up (history ${hasHistory})`, async () => {
      // Upstream takes 1.5 s to take in each create, the client waits 0.5 s for an answer, and
      // an unanswered create is looked up once its send is 3 s old. No backoff: only the settle
      // keeps the create from going out again.
      const options = { lookbackMs: 0, pushRetryBaseMs: 0, pushRetryMaxMs: 0, createSettleMs: 3_000 };
      h = await startSyncHarness(dialect, options, { proxy: true });
      const table = await itemsTable(hasHistory);
      await questionMarkSql(h.tm)(`INSERT INTO ${table} (title) VALUES (?)`, ['slow']);
      let holding = 0;
      let postedAt = 0;
      h.proxy!.intercept = async ({ method, path }) => {
        if (!isCreate(method, path)) return undefined;
        postedAt = Date.now();
        holding += 1;
        await sleep(1_500);
        holding -= 1;
        return undefined;
      };
      slow = new WorkspaceClient({ baseUrl: h.proxy!.url, apiKey: h.emu.apiKey, workspaceId: h.emu.workspaceId, timeoutMs: 500 });
      const engine = new SyncEngine({ client: slow, mirror: h.tm.mirror, options });
      await engine.runCycle();
      while (holding > 0) await sleep(50);
      // The POST has landed now; the create is not due for its look-up yet, and nothing is sent.
      await engine.runCycle();
      while (holding > 0) await sleep(50);
      expect((await h.upstream.allRecords('chaos', 'items')).map((r) => r.values)).toEqual([{ title: 'slow', score: null }]);
      const [entry] = await h.tm.sql<{ status: string; sending_since: unknown; last_error: string }>(
        `SELECT status, sending_since, last_error FROM ${h.tm.table('_wsmirror_outbox')}`);
      expect(entry).toMatchObject({ status: 'pending', sending_since: expect.anything(), last_error: expect.stringMatching(/no answer.*looked up upstream from/) });
      expect(h.proxy!.seen.filter((r) => isCreate(r.method, r.path))).toHaveLength(1);
      // `wsmirror outbox` lists it as pending, with why and when it is looked up.
      const listed = await runWsmirror(['outbox', '--json'], mirrorEnv(h.tm));
      expect(JSON.parse(listed.stdout)).toMatchObject([{
        status: 'pending', attempts: 1, nextAttemptAt: expect.any(String), lastError: expect.stringMatching(/no answer, and upstream may still be applying it/),
      }]);

      // Once the send is old enough, the look-up binds the row to the record it made.
      await sleep(Math.max(0, postedAt + 3_100 - Date.now()));
      await engine.runCycle();
      expect((await h.upstream.allRecords('chaos', 'items')).map((r) => r.values)).toEqual([{ title: 'slow', score: null }]);
      expect(await h.tm.sql(`SELECT * FROM ${h.tm.table('_wsmirror_outbox')}`)).toEqual([]);
      await h.expectConverged('chaos', 'items');
    }, 60_000);

    // 502 and 504, and the 52x of a CDN in front (524: the origin is still working on it).
    for (const status of [504, 524]) it(`creates a row once when a gateway answers ${status} and upstream applies the POST later (history ${hasHistory})`, async () => {
      // A proxy in front of upstream gives up on the create while upstream still takes it
      // in, a second later: a gateway's answer is not upstream's, so the create waits its settle.
      const options = { lookbackMs: 0, pushRetryBaseMs: 0, pushRetryMaxMs: 0, createSettleMs: 3_000 };
      h = await startSyncHarness(dialect, options, { proxy: true });
      const table = await itemsTable(hasHistory);
      await questionMarkSql(h.tm)(`INSERT INTO ${table} (title) VALUES (?)`, ['behind a gateway']);
      const landing: Promise<unknown>[] = [];
      h.proxy!.intercept = ({ method, path, body, authorization }) => {
        if (!isCreate(method, path)) return undefined;
        landing.push(sleep(1_000).then(() => fetch(`${h.emu.url}${path}`, {
          method, body, headers: { authorization, 'content-type': 'application/json' },
        })));
        return { status, body: '{"error":{"message":"gateway timeout"}}' };
      };
      const engine = new SyncEngine({ client: h.client, mirror: h.tm.mirror, options });
      await engine.runCycle();
      await Promise.all(landing);
      await engine.runCycle();
      await Promise.all(landing);
      expect((await h.upstream.allRecords('chaos', 'items')).map((r) => r.values)).toEqual([{ title: 'behind a gateway', score: null }]);
      h.proxy!.intercept = undefined;
      await sleep(3_100);
      await engine.runCycle();
      expect((await h.upstream.allRecords('chaos', 'items')).map((r) => r.values)).toEqual([{ title: 'behind a gateway', score: null }]);
      expect(await h.tm.sql(`SELECT * FROM ${h.tm.table('_wsmirror_outbox')}`)).toEqual([]);
      await h.expectConverged('chaos', 'items');
    }, 60_000);
  }
});
