import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { afterEach, expect, it } from 'vitest';
import type { FieldCreate } from '../../src/api/index.ts';
import { forEachDialect } from '../helpers/dialects.ts';
import { field } from '../helpers/schema.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * SQLite bounds the arguments of a function call (SQLITE_MAX_FUNCTION_ARG): 127 before 3.48,
 * 1,000 since. A SQLite mirror file is read and edited by tools that bundle an older SQLite
 * (Debian's sqlite3 and Python, Metabase, Grafana…), which parse every trigger and view of the
 * file when they first read its schema: one call with more arguments makes the whole file
 * "malformed" to them. A wide table is mirrored here, and the file opened with that limit: by
 * this Node's SQLite with the limit set at run time (always), and by the machine's python3 when
 * its SQLite is older than 3.48. And a table wider than 1,000 columns is mirrored at all.
 */
const OLD_FUNCTION_ARG_LIMIT = 127;
const WIDE = 130;

/** 130 fields of every kind a readable view shows otherwise (labels, bounds), strings for the rest. */
function wideFields(): FieldCreate[] {
  const kinds: FieldCreate[] = [
    field('n', 'number'), field('flag', 'boolean'), field('due', 'date'), field('meeting', 'appointment'),
    field('stage', 'choice', { options: [{ name: 'open' }, { name: 'won' }] }),
    field('tags', 'multi', { options: [{ name: 'red' }, { name: 'blue' }] }),
    field('other', 'reference', { refTableName: 'other' }),
  ];
  return [...kinds, ...Array.from({ length: WIDE - kinds.length }, (_, i) => field(`s${String(i).padStart(3, '0')}`, 'string'))];
}

/** The machine's python3 SQLite version when it is older than 3.48; undefined otherwise. */
function oldPythonSqlite(): string | undefined {
  const probe = spawnSync('python3', ['-c', 'import sqlite3; print(sqlite3.sqlite_version)'], { encoding: 'utf8' });
  const version = probe.status === 0 ? probe.stdout.trim() : '';
  const [major, minor] = version.split('.').map(Number);
  return major === 3 && minor! < 48 ? version : undefined;
}
const pythonSqlite = oldPythonSqlite();

forEachDialect('SQLite mirror: function calls within SQLite\'s limit on their arguments', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  async function wideMirror(): Promise<{ file: string; ids: string[] }> {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await h.upstream.createModule('m');
    await h.upstream.createTable('m', 'other', {}, [field('name', 'string')]);
    await h.upstream.createTable('m', 'wide', { hasHistory: true }, wideFields());
    const ids = await h.upstream.createRecords('m', 'wide', [{ s000: 'a', n: 1 }, { s000: 'b', n: 2 }]);
    await h.sync();
    return { file: h.tm.url.slice('sqlite:'.length), ids };
  }

  /** Local edits made by the older SQLite reach upstream through the mirror's triggers. */
  async function expectEditsPushed(ids: string[]): Promise<void> {
    await h.sync();
    const records = await h.upstream.allRecords('m', 'wide');
    expect(records.map((r) => [r.values['s000'], r.values['s001'] ?? null]).sort()).toEqual([['a', 'edited'], ['c', null]]);
    expect(records.some((r) => r.id === ids[1])).toBe(false);
    await h.expectConverged('m', 'wide');
  }

  /**
   * Reads every view and edits the table in another process, by this Node's SQLite with the
   * limit set (two SQLite libraries in one process release each other's file locks); its output.
   */
  function editWithOldLimit(file: string, ids: string[]): SpawnSyncReturns<string> {
    const script = `
      import { DatabaseSync } from 'node:sqlite';
      const [file, kept, gone, limit] = process.argv.slice(1);
      const db = new DatabaseSync(file);
      // Before the first statement, which reads the schema: every trigger and view is parsed under it.
      db.limits.functionArg = Number(limit);
      if (db.limits.functionArg !== Number(limit)) throw new Error('this Node cannot limit the arguments of a function call');
      const objects = db.prepare("SELECT type, name FROM sqlite_schema WHERE type IN ('view', 'trigger')").all();
      for (const view of objects.filter((o) => o.type === 'view')) db.prepare('SELECT * FROM "' + view.name + '"').all();
      db.exec("UPDATE m__wide SET s001 = 'edited' WHERE id = " + Number(kept));
      db.exec('DELETE FROM m__wide WHERE id = ' + Number(gone));
      db.exec("INSERT INTO m__wide (s000, n) VALUES ('c', 3)");
      // A REPLACE naming a row runs the BEFORE INSERT trigger that keeps the row's values.
      db.exec('REPLACE INTO m__wide (id, s000, n, s001) SELECT id, s000, n, s001 FROM m__wide WHERE id = ' + Number(kept));
      db.close();
      console.log(objects.filter((o) => o.type === 'trigger').length);`;
    return spawnSync(process.execPath, ['--no-warnings', '--input-type=module', '-e', script, file, ids[0]!, ids[1]!, String(OLD_FUNCTION_ARG_LIMIT)], { encoding: 'utf8' });
  }

  it.skipIf(dialect.dialect !== 'sqlite')(`reads every view and edits the table with at most ${OLD_FUNCTION_ARG_LIMIT} arguments a call (this Node's SQLite, the limit set)`, async () => {
    const { file, ids } = await wideMirror();
    const run = editWithOldLimit(file, ids);
    expect(run.stderr).toBe('');
    expect(Number(run.stdout.trim())).toBeGreaterThan(WIDE);
    await expectEditsPushed(ids);
  });

  it.skipIf(dialect.dialect !== 'sqlite')('makes the triggers of an older capture set-up again when the mirror is opened, so the file reads again', async () => {
    const { file, ids } = await wideMirror();
    // An older set-up: its BEFORE INSERT trigger calls json_array with one argument per column.
    const guard = '_wsmirror_capture_m__wide_gi';
    await h.tm.sql(`DROP TRIGGER "${guard}"`);
    await h.tm.sql(`CREATE TRIGGER "${guard}" BEFORE INSERT ON m__wide BEGIN SELECT json_array(${Array.from({ length: WIDE + 1 }, (_, i) => i).join(', ')}); END`);
    await h.tm.sql(`UPDATE _wsmirror_meta SET value = '13' WHERE key = 'capture_version'`);
    expect(editWithOldLimit(file, ids).stderr).toContain('too many arguments on function json_array');

    await h.tm.reopen();
    const run = editWithOldLimit(file, ids);
    expect(run.stderr).toBe('');
    await expectEditsPushed(ids);
  });

  it.skipIf(dialect.dialect !== 'sqlite')('mirrors and captures a table of 1,100 writable fields (over the 1,000 arguments of a current SQLite)', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await h.upstream.createModule('m');
    await h.upstream.createTable('m', 'w', {}, Array.from({ length: 1_100 }, (_, i) => field(`s${i}`, 'string')));
    const [id] = await h.upstream.createRecords('m', 'w', [{ s0: 'a', s1099: 'z' }]);
    await h.sync();
    await h.tm.sql(`INSERT INTO m__w (s0, s1099) VALUES ('b', 'y')`);
    // A REPLACE keeps the row's 1,100 values in the BEFORE INSERT trigger, and captures the change.
    await h.tm.sql(`REPLACE INTO m__w (id, s0, s1099) VALUES (${Number(id)}, 'a', 'x')`);
    await h.sync();
    const records = await h.upstream.allRecords('m', 'w');
    expect(records.map((r) => [r.values['s0'], r.values['s1099']]).sort()).toEqual([['a', 'x'], ['b', 'y']]);
    await h.expectConverged('m', 'w');
  }, 60_000);

  it.skipIf(dialect.dialect !== 'sqlite' || pythonSqlite === undefined)(`reads every view and edits the table through python3's SQLite ${pythonSqlite ?? '(none older than 3.48 here)'}`, async () => {
    const { file, ids } = await wideMirror();
    const script = `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
views = [r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type = 'view'")]
for v in views: db.execute('SELECT * FROM "%s"' % v).fetchall()
db.execute("UPDATE m__wide SET s001 = 'edited' WHERE id = ?", (int(sys.argv[2]),))
db.execute("DELETE FROM m__wide WHERE id = ?", (int(sys.argv[3]),))
db.execute("INSERT INTO m__wide (s000, n) VALUES ('c', 3)")
db.execute("REPLACE INTO m__wide (id, s000, n, s001) SELECT id, s000, n, s001 FROM m__wide WHERE id = ?", (int(sys.argv[2]),))
db.close()
print(len(views))`;
    const run = spawnSync('python3', ['-c', script, file, ids[0]!, ids[1]!], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(Number(run.stdout.trim())).toBeGreaterThan(0);
    await expectEditsPushed(ids);
  });
});
