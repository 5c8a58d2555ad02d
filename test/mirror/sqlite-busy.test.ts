import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openMirror } from '../../src/mirror/open-mirror.ts';

/**
 * A write transaction some SQL client left open on a SQLite mirror keeps the daemon from writing
 * (Postgres writers wait on row locks, not on the whole database): the error says so.
 */
describe('a SQLite mirror another connection holds locked', () => {
  it('names the mirror and the open write transaction when a write times out, and writes again once it ends', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wsmirror-busy-'));
    const file = join(dir, 'mirror.db');
    const mirror = await openMirror(`sqlite:${file}`);
    const holder = new Database(file);
    try {
      holder.exec('BEGIN IMMEDIATE');
      await expect(mirror.setCursor('k', 'v')).rejects.toThrow(/mirror\.db is locked: another connection has held a write transaction on it for over 10 s/);
      holder.exec('ROLLBACK');
      await mirror.setCursor('k', 'v');
      expect(await mirror.getCursor('k')).toBe('v');
    } finally {
      holder.close();
      await mirror.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
