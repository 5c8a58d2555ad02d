import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { sampleValue } from '../daemon/metrics-text.ts';
import { forEachDialect, questionMarkSql } from '../helpers/dialects.ts';
import { freePort } from '../helpers/free-port.ts';
import { startWsmirrorKilledAfterEach } from '../helpers/live-daemons.ts';
import { countLogLines, daemonEnv, spawnEmulator, stopProcess, type EmulatorProcess } from '../helpers/processes.ts';
import { field } from '../helpers/schema.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * `wsmirror run` whose upstream goes down (its process killed: connections refused) while an
 * application keeps editing the mirror through its own connection, so every round of a push finds
 * new edits due. The push stops at the first request that fails after the client's retries, and
 * the cycle ends failed at once (docs/operations.md, "When Postgres or upstream is not up"): one
 * `sync cycle failed` line, `/readyz` 503 with the reason, `/metrics` showing the outbox as SQL
 * does; once upstream is back, a cycle succeeds again.
 */
forEachDialect('wsmirror run: a push while upstream is down', ({ fresh }) => {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-push-down-'));
  const startWsmirror = startWsmirrorKilledAfterEach();
  let emulator: EmulatorProcess | undefined;
  afterEach(async () => {
    if (emulator) await stopProcess(emulator.child, 'SIGKILL');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('stops the push and ends the cycle failed within seconds; readiness, log and metrics say so', async () => {
    const tm = await fresh();
    const sql = questionMarkSql(tm);
    const people = tm.table('crm__people');
    const outbox = tm.table('_wsmirror_outbox');
    const upstreamPort = await freePort();
    const data = join(dir, `${tm.dialect}-upstream.db`);
    emulator = await spawnEmulator({ args: ['--port', String(upstreamPort), '--data', data] });
    const upstream = new UpstreamWorkspace(emulator);
    await upstream.createModule('crm');
    await upstream.createTable('crm', 'people', { hasHistory: true }, [field('name', 'string')]);
    await upstream.createRecords('crm', 'people', Array.from({ length: 40 }, (_, i) => ({ name: `upstream ${i + 1}` })));

    const httpPort = await freePort();
    const base = `http://127.0.0.1:${httpPort}`;
    const daemon = startWsmirror(['run'], daemonEnv(emulator, tm, {
      WSMIRROR_HTTP_PORT: String(httpPort), WSMIRROR_SCHEDULE: '2s', WSMIRROR_LOG_LEVEL: 'info',
      // Few, short retries keep the test short; the push goes round and round all the same.
      WSMIRROR_UPSTREAM_RETRIES: '2', WSMIRROR_UPSTREAM_TIMEOUT: '2s',
    }), { killAfterMs: 150_000, cwd: dir });
    const readyz = async () => {
      const res = await fetch(`${base}/readyz`);
      return { status: res.status, body: (await res.json()) as { reason?: string } };
    };
    const scrape = async () => (await fetch(`${base}/metrics`)).text();
    const failedCycles = () => countLogLines(daemon.output().stdout, /^sync cycle failed/);
    await daemon.waitFor('a first cycle', (stdout) => countLogLines(stdout, /^cycle done/) >= 1);
    expect((await readyz()).status).toBe(200);

    // The application inserts, updates and deletes rows every half second, before and after upstream goes.
    let n = 0;
    const edit = async () => {
      n++;
      await sql(`INSERT INTO ${people} (name) VALUES (?)`, [`local ${n}`]);
      await sql(`UPDATE ${people} SET name = ? WHERE id = ?`, [`edited ${n}`, (n % 20) + 1]);
      if (n <= 20) await sql(`DELETE FROM ${people} WHERE id = ?`, [20 + n]);
    };
    let editing = true;
    let downAt = 0;
    const application = (async () => {
      while (editing) {
        await edit();
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    try {
      await new Promise((r) => setTimeout(r, 3_000));
      await stopProcess(emulator.child, 'SIGKILL');
      downAt = Date.now();
      const failedBefore = failedCycles();

      // Within seconds of upstream going down, not once it is back.
      await daemon.waitFor('a failed cycle', () => failedCycles() > failedBefore, 15_000);
      expect(Date.now() - downAt).toBeLessThan(15_000);
      const ready = await readyz();
      expect(ready.status).toBe(503);
      expect(ready.body.reason).toMatch(/^the last cycle failed: .*cannot reach upstream/);
    } finally {
      editing = false;
      await application;
    }

    // The edits have stopped: a cycle that started after them shows the outbox as it is.
    const settled = failedCycles();
    await daemon.waitFor('two more failed cycles', () => failedCycles() >= settled + 2, 20_000);
    const text = await scrape();
    const downFor = (Date.now() - downAt) / 1000;
    const [pending] = await sql<{ n: number | string }>(`SELECT count(*) AS n FROM ${outbox} WHERE status = 'pending'`);
    expect(Number(pending!.n)).toBeGreaterThan(0);
    expect(sampleValue(text, 'wsmirror_outbox_entries', { status: 'pending' })).toBe(Number(pending!.n));
    // The oldest pending edit was made about when upstream went (those before it were pushed).
    expect(sampleValue(text, 'wsmirror_outbox_oldest_pending_age_seconds')).toBeGreaterThan(downFor - 2);
    // A failure that every request meets is no edit's fault: none failed, and those never sent were not charged.
    const byAttempts = await sql<{ status: string; charged: number | string; n: number | string }>(
      `SELECT status, CASE WHEN attempts > 0 THEN 1 ELSE 0 END AS charged, count(*) AS n FROM ${outbox} GROUP BY status, CASE WHEN attempts > 0 THEN 1 ELSE 0 END`,
    );
    expect(byAttempts.map((r) => r.status)).not.toContain('failed');
    expect(byAttempts.find((r) => Number(r.charged) === 0)).toBeDefined();

    // Upstream back: the next cycle succeeds and the daemon is ready again.
    emulator = await spawnEmulator({ args: ['--port', String(upstreamPort), '--data', data] });
    const succeeded = countLogLines(daemon.output().stdout, /^cycle done/);
    await daemon.waitFor('a cycle after upstream came back', (stdout) => countLogLines(stdout, /^cycle done/) > succeeded, 30_000);
    expect((await readyz()).status).toBe(200);
    await stopProcess(daemon.child);
    const result = await daemon.exited;
    expect(result.code, result.stderr).toBe(0);
  }, 150_000);
});
