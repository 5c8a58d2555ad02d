import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, MirrorUnavailableError } from '../../src/errors.ts';
import { catalogTablesOf } from '../../src/mirror/catalog-ddl.ts';
import { DIALECTS } from '../../src/mirror/dialects.ts';
import { openMirror } from '../../src/mirror/open-mirror.ts';
import { displayMirrorUrl, parseMirrorUrl } from '../../src/mirror/mirror-url.ts';
import { forEachDialect } from '../helpers/dialects.ts';

describe('mirror URLs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-open-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('parses sqlite: and postgres:// URLs', () => {
    expect(parseMirrorUrl('sqlite:./wsmirror.db')).toMatchObject({ dialect: 'sqlite', path: './wsmirror.db' });
    expect(parseMirrorUrl('sqlite:///var/lib/w.db')).toMatchObject({ dialect: 'sqlite', path: '/var/lib/w.db' });
    expect(parseMirrorUrl('postgresql://u@h/db')).toMatchObject({ dialect: 'postgres', connectionString: 'postgresql://u@h/db' });
  });

  it('masks passwords', () => {
    expect(displayMirrorUrl('postgres://alice:s3cret@db:5432/x')).toBe('postgres://alice:[Redacted]@db:5432/x');
    expect(displayMirrorUrl('postgres://alice:s3%cret@db:5432/x')).toBe('postgres://alice:[Redacted]@db:5432/x');
    expect(displayMirrorUrl('sqlite:./a.db')).toBe('sqlite:./a.db');
  });

  it('shows a Postgres URL rebuilt without its password, whatever characters it holds', () => {
    expect(displayMirrorUrl('postgres://u2:ab"cdSECRET@127.0.0.1:25498/db')).toBe('postgres://u2:[Redacted]@127.0.0.1:25498/db');
    expect(displayMirrorUrl('postgres://u2:abSECRET\\@127.0.0.1:25498/db')).toBe('postgres://u2:[Redacted]@127.0.0.1:25498/db');
    expect(displayMirrorUrl('postgres://u"x:SECRETpw@h/db')).toBe('postgres://u%22x:[Redacted]@h/db');
    expect(displayMirrorUrl('postgres://u:p@ss"w@h/db?sslmode=require')).toBe('postgres://u:[Redacted]@h/db?sslmode=require');
    expect(displayMirrorUrl('postgres://u:pw@/bi?host=/run/postgresql')).toBe('postgres://u:[Redacted]@/bi?host=/run/postgresql');
    expect(displayMirrorUrl('postgresql:///bi?host=/run/postgresql&user=w')).toBe('postgresql:///bi?host=/run/postgresql&user=w');
    expect(displayMirrorUrl('postgres://h/db?password=S1&pass%77ord=S2&SSLPASSWORD=S3&application_name=bi#frag'))
      .toBe('postgres://h/db?password=[Redacted]&pass%77ord=[Redacted]&SSLPASSWORD=[Redacted]&application_name=bi');
  });

  it('shows a value that is no URL with everything after its user part hidden', () => {
    expect(displayMirrorUrl('postgres:/u:SECRETpw@127.0.0.1/db')).toBe('postgres:/u:[Redacted]');
    expect(displayMirrorUrl('postgres//u:SECRETpw@127.0.0.1/db')).toBe('postgres//u:[Redacted]');
    expect(displayMirrorUrl('u:SECRETpw@127.0.0.1/db')).toBe('u:[Redacted]');
    expect(displayMirrorUrl('postgres://u:SECRETpw@127.0.0.1:99999/db')).toBe('postgres://u:[Redacted]');
    expect(displayMirrorUrl('mysql://root:SECRET@db/x')).toBe('mysql://root:[Redacted]');
    expect(displayMirrorUrl('sqlit:/var/lib/w.db')).toBe('sqlit:/var/lib/w.db');
  });

  it('throws ConfigError for unsupported, malformed or unusable URLs, never showing the password', async () => {
    await expect(openMirror('mysql://root:hunter2@db/x')).rejects.toThrow(ConfigError);
    await expect(openMirror('mysql://root:hunter2@db/x')).rejects.not.toThrow(/hunter2/);
    await expect(openMirror('sqlite:')).rejects.toThrow(/path is empty/);
    await expect(openMirror('postgres://u:hunter2@[bad/x')).rejects.toThrow(ConfigError);
    await expect(openMirror('postgres://u:hunter2@[bad/x')).rejects.not.toThrow(/hunter2/);
    await expect(openMirror(`sqlite:${join(dir, 'missing-dir', 'x.db')}`)).rejects.toThrow(ConfigError);
    const notDb = join(dir, 'not-a-db.db');
    writeFileSync(notDb, 'this is not a database file, just text '.repeat(50));
    await expect(openMirror(`sqlite:${notDb}`)).rejects.toThrow(ConfigError);
  });

  it('throws MirrorUnavailableError naming the URL (password masked) when Postgres is unreachable', async () => {
    const error = await openMirror('postgres://alice:hunter2@127.0.0.1:1/nowhere').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MirrorUnavailableError);
    expect((error as MirrorUnavailableError).code).toBe('MIRROR_UNAVAILABLE');
    expect((error as Error).message).toContain('postgres://alice:[Redacted]@127.0.0.1:1/nowhere');
    expect((error as Error).message).not.toContain('hunter2');
  });
});

forEachDialect('mirror open', ({ dialect, fresh }) => {
  it('creates every catalog table, with the documented columns, idempotently', async () => {
    const t = await fresh();
    for (const def of catalogTablesOf(DIALECTS[dialect])) {
      const cols = dialect === 'postgres'
        ? (await t.sql<{ c: string }>(`SELECT column_name AS c FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`, [t.pgSchema, def.name])).map((r) => r.c)
        : (await t.sql<{ c: string }>(`SELECT name AS c FROM pragma_table_info(?)`, [def.name])).map((r) => r.c);
      expect(cols, def.name).toEqual(def.columns.map((c) => c.name));
    }
    const again = await t.reopen();
    expect((await again.readCatalog()).revision).toBe(0);
    await again.close();
    await again.close();
    await expect(again.readCatalog()).rejects.toThrow(/closed/);
  });

  it('a catalog table a mirror of an older wsmirror lacks is no access problem, and the next open for writing makes it', async () => {
    const t = await fresh();
    await t.sql(`DROP TABLE ${t.table('_wsmirror_created')}`);
    const pgSchema = t.pgSchema ? { pgSchema: t.pgSchema } : {};
    const existing = await openMirror(t.url, { mustExist: true, ...pgSchema });
    try {
      expect(await existing.accessProblems()).toEqual([]);
    } finally {
      await existing.close();
    }
    await (await t.reopen()).close();
    expect(await t.sql(`SELECT temp_id, table_id, created_id, created_at FROM ${t.table('_wsmirror_created')}`)).toEqual([]);
    if (dialect === 'postgres') {
      const [described] = await t.sql<{ text: string }>(`SELECT obj_description($1::regclass, 'pg_class') AS text`, [t.table('_wsmirror_created')]);
      expect(described!.text).toMatch(/^wsmirror: rows inserted here and created upstream/);
    }
  });

  it('enforces the outbox statuses and keeps entries readable in SQL', async () => {
    const t = await fresh();
    const insert = (status: string) => t.sql(
      `INSERT INTO ${t.table('_wsmirror_outbox')} ("table_id", "sql_table", "record_id", "operation", "column_name", "new_value", "status") VALUES ('t1', 'crm__deals', 1, 'update', 'title', '"x"', '${status}')`,
    );
    await insert('pending');
    await insert('conflict');
    await expect(insert('sent')).rejects.toThrow();
    const rows = await t.sql<{ entry_id: unknown; status: string; attempts: number; changed_at: unknown }>(
      `SELECT "entry_id", "status", "attempts", "changed_at" FROM ${t.table('_wsmirror_outbox')} ORDER BY "entry_id"`,
    );
    expect(rows.map((r) => [Number(r.entry_id), r.status, r.attempts])).toEqual([[1, 'pending', 0], [2, 'conflict', 0]]);
    expect(Number.isNaN(new Date(rows[0]!.changed_at as string).getTime())).toBe(false);
  });

  it.runIf(dialect === 'sqlite')('runs SQLite in WAL mode', async () => {
    const t = await fresh();
    expect(await t.sql(`PRAGMA journal_mode`)).toEqual([{ journal_mode: 'wal' }]);
  });
});
