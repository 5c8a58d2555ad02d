import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { CAPTURE_VERSION } from '../../src/mirror/operations/migrate-catalog.ts';
import { CATALOG_VERSION } from '../../src/mirror/catalog-tables.ts';
import { runWsmirror } from '../helpers/processes.ts';
import { sqliteDaemonSuite } from '../helpers/sqlite-daemon-suite.ts';

/**
 * A mirror made by another wsmirror version, opened by this one (docs/operations.md,
 * "Upgrading"): real processes on SQLite files.
 */
describe('a mirror of another wsmirror version (real processes)', () => {
  const suite = sqliteDaemonSuite('wsmirror-upgrade', ['Ada']);
  let n = 0;
  const meta = (file: string, key: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return (db.prepare('SELECT value FROM _wsmirror_meta WHERE key = ?').get(key) as { value: string }).value;
    } finally {
      db.close();
    }
  };
  const setMeta = (file: string, key: string, value: string, more?: (db: Database.Database) => void) => {
    const db = new Database(file);
    try {
      db.prepare('UPDATE _wsmirror_meta SET value = ? WHERE key = ?').run(value, key);
      more?.(db);
    } finally {
      db.close();
    }
  };
  /** A mirror synced once by this version. */
  async function synced(): Promise<string> {
    const file = join(suite.dir, `u${++n}.db`);
    const first = await runWsmirror(['sync'], suite.env(file), { cwd: suite.dir });
    expect(first.code, first.stderr).toBe(0);
    return file;
  }

  it('refuses a mirror whose capture set-up a newer wsmirror installed, and leaves it as it is', async () => {
    const file = await synced();
    setMeta(file, 'capture_version', String(CAPTURE_VERSION + 1));
    const res = await runWsmirror(['sync'], suite.env(file), { cwd: suite.dir });
    expect(res.code, res.stderr).toBe(78);
    expect(res.stderr).toContain(`written by a newer wsmirror (capture set-up ${CAPTURE_VERSION + 1}; this one knows ${CAPTURE_VERSION})`);
    expect(meta(file, 'capture_version')).toBe(String(CAPTURE_VERSION + 1));
  });

  it('a command that migrates refuses while another process syncs the mirror, and migrates nothing', async () => {
    const { file, env, daemon } = suite.startRun({ WSMIRROR_SCHEDULE: '1h' });
    await daemon.waitFor('a cycle', (stdout) => /cycle done/.test(stdout));
    // As if the running daemon were an older version: its capture set-up is older.
    setMeta(file, 'capture_version', String(CAPTURE_VERSION - 1));
    for (const args of [['outbox', 'retry', '--table', 'crm.people'], ['outbox', 'discard', '--table', 'crm.people']]) {
      const res = await runWsmirror(args, env, { cwd: suite.dir });
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(1);
      expect(res.stderr).toMatch(/needs bringing up to this version .* in use by another wsmirror process/);
      expect(res.stderr).toContain('stop it, run wsmirror sync with this version');
      expect(meta(file, 'capture_version')).toBe(String(CAPTURE_VERSION - 1));
    }
  });

  it('resync --no-sync brings an older catalog up to date before marking the tables', async () => {
    const file = await synced();
    // Layout 6: no retried_at column in the outbox.
    setMeta(file, 'catalog_version', '6', (db) => db.exec('ALTER TABLE _wsmirror_outbox DROP COLUMN retried_at'));
    const res = await runWsmirror(['resync', '--no-sync', 'crm.people'], suite.env(file), { cwd: suite.dir });
    expect(res.code, res.stderr).toBe(0);
    expect(meta(file, 'catalog_version')).toBe(String(CATALOG_VERSION));
  });
});
