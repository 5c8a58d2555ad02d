import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openMirror } from '../../src/mirror/open-mirror.ts';

const MB = 1024 * 1024;

/**
 * A reader that keeps a read transaction open on a SQLite mirror does not block the daemon (WAL),
 * but SQLite cannot start its write-ahead log over meanwhile, so the -wal file grows with every
 * write; without a size limit it kept that size once the reader had ended.
 */
describe('a SQLite mirror a reader keeps a read transaction open on', () => {
  it('lets the daemon write meanwhile, and trims the -wal file back to 64 MB once the reader ends', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wsmirror-wal-'));
    const file = join(dir, 'mirror.db');
    const mirror = await openMirror(`sqlite:${file}`);
    const reader = new Database(file, { readonly: true });
    try {
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM _wsmirror_meta').get();
      // Each value differs throughout: SQLite rewrites only the pages of a row that change.
      for (let i = 0; i < 80; i++) await mirror.setCursor('k', String.fromCharCode(97 + (i % 26)).repeat(MB));
      expect(statSync(`${file}-wal`).size).toBeGreaterThan(80 * MB);
      reader.exec('COMMIT');
      // The first write checkpoints the whole log into the file; the next starts the log over.
      for (let i = 0; i < 2; i++) await mirror.setCursor('k', String(i));
      expect(statSync(`${file}-wal`).size).toBeLessThanOrEqual(64 * MB);
      expect(await mirror.getCursor('k')).toBe('1');
    } finally {
      reader.close();
      await mirror.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
