import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { forEachDialect, quoteId, type TestMirror } from '../helpers/dialects.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror, type MirrorLocation } from '../helpers/processes.ts';

/**
 * `sync` and `run` ask upstream first: a rejected key or an unknown workspace creates nothing
 * locally (no SQLite file, no Postgres schema).
 */
forEachDialect('commands check upstream before creating the mirror', (dialect) => {
  let emu: RunningEmulator;
  let tm: TestMirror;
  const created: string[] = [];
  let n = 0;
  beforeAll(async () => {
    emu = await startEmulator();
    tm = await dialect.fresh();
  });
  afterAll(async () => {
    if (tm?.dialect === 'postgres') for (const schema of created) await tm.sql(`DROP SCHEMA IF EXISTS ${quoteId(schema)} CASCADE`);
    await emu?.close();
  });

  /** A mirror location nothing has created yet. */
  function newLocation(): MirrorLocation {
    n++;
    if (tm.dialect === 'sqlite') return { url: `sqlite:${join(dirname(tm.url.slice('sqlite:'.length)), `never-${n}.db`)}` };
    const schema = `${tm.pgSchema}_never_${n}`;
    created.push(schema);
    return { url: tm.url, pgSchema: schema };
  }

  async function exists(location: MirrorLocation): Promise<boolean> {
    if (tm.dialect === 'sqlite') return existsSync(location.url.slice('sqlite:'.length));
    const rows = await tm.sql('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [location.pgSchema]);
    return rows.length > 0;
  }

  for (const command of ['sync', 'run'] as const) {
    it(`${command}: a rejected API key exits 1 naming the refusal, and creates no mirror`, async () => {
      const location = newLocation();
      const res = await runWsmirror([command], daemonEnv(emu, location, { WSMIRROR_API_KEY: 'rejected-key-0123' }), { killAfterMs: 15_000 });
      expect(res.code, `${res.signal ?? ''} ${res.stderr}`).toBe(1);
      expect(res.stderr).toContain('401');
      expect(res.stdout + res.stderr).not.toContain('rejected-key-0123');
      expect(await exists(location)).toBe(false);
    }, 30_000);

    it(`${command}: an unknown workspace exits 1 and creates no mirror`, async () => {
      const location = newLocation();
      const res = await runWsmirror([command], daemonEnv(emu, location, { WSMIRROR_WORKSPACE_ID: 'nope00000001' }), { killAfterMs: 15_000 });
      expect(res.code, `${res.signal ?? ''} ${res.stderr}`).toBe(1);
      expect(res.stderr).toContain('404');
      expect(await exists(location)).toBe(false);
    }, 30_000);
  }

  it('sync: a 404 for the workspace names both settings that make its URL, and the URL asked', async () => {
    const location = newLocation();
    const res = await runWsmirror(['sync'], daemonEnv({ ...emu, url: `${emu.url}/wrong-prefix` }, location), { killAfterMs: 15_000 });
    expect(res.code, `${res.signal ?? ''} ${res.stderr}`).toBe(1);
    expect(res.stderr).toContain(`GET ${emu.url}/wrong-prefix/api/v1/workspace/${emu.workspaceId}`);
    expect(res.stderr).toContain('WSMIRROR_WORKSPACE_ID (upstream.workspaceId)');
    expect(res.stderr).toContain('WSMIRROR_BASE_URL (upstream.baseUrl)');
    expect(await exists(location)).toBe(false);
  }, 30_000);

  it('sync with an accepted key creates the mirror', async () => {
    const location = newLocation();
    const res = await runWsmirror(['sync'], daemonEnv(emu, location));
    expect(res.code, res.stderr).toBe(0);
    expect(await exists(location)).toBe(true);
  });
});
