import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.ts';
import { countLogLines } from '../helpers/processes.ts';
import { sqliteDaemonSuite } from '../helpers/sqlite-daemon-suite.ts';
import { sampleValue } from './metrics-text.ts';

/**
 * A reader that keeps a read transaction open makes a SQLite mirror's -wal grow with every write,
 * and nothing fails: /metrics of `wsmirror run` shows the file's size, read at each scrape.
 */
describe('/metrics: the -wal file of a SQLite mirror (real processes)', () => {
  const suite = sqliteDaemonSuite('wsmirror-wal-metric', ['Ada']);

  it('exports the size of the -wal file, which grows while a reader holds a read transaction', async () => {
    const httpPort = await freePort();
    const { file, daemon } = suite.startRun({ WSMIRROR_SCHEDULE: '1h', WSMIRROR_HTTP_PORT: String(httpPort) });
    await daemon.waitFor('a cycle', (stdout) => countLogLines(stdout, /^cycle done/) >= 1);
    const scrape = async () => sampleValue(await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text(), 'wsmirror_sqlite_wal_bytes');
    const wal = () => statSync(`${file}-wal`).size;
    expect(await scrape()).toBe(wal());

    const reader = new Database(file, { readonly: true });
    const writer = new Database(file);
    try {
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM crm__people').get();
      writer.exec('CREATE TABLE scratch (b BLOB)');
      const insert = writer.prepare('INSERT INTO scratch VALUES (zeroblob(1048576))');
      for (let i = 0; i < 8; i++) insert.run();
      expect(wal()).toBeGreaterThan(8 * 1024 * 1024);
      expect(await scrape()).toBe(wal());
    } finally {
      reader.close();
      writer.close();
    }
  }, 60_000);
});
