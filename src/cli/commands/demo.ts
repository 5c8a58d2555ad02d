import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvalidArgumentError, type Command } from 'commander';
import { ConfigError, EXIT } from '../../errors.ts';
import type { Catalog, Mirror } from '../../mirror/index.ts';
import { DEMO_CREATOR, readClaim, type MirrorClaim } from '../../daemon/mirror-claim.ts';

/** The sample workspace the demo serves; shipped with the package (`files` includes `config`). */
export const DEMO_SEED_FILE = fileURLToPath(new URL('../../../config/emulator-seed.example.json', import.meta.url));
const DEFAULT_DB = './wsmirror-demo.db';
/** How often `--keep-running` pulls: short, so an edit shows up while the user watches. */
const DEMO_SCHEDULE = '5s';

interface DemoFlags {
  db: string;
  port: number;
  keepRunning?: boolean;
}

function port(value: string): number {
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || n > 65535) throw new InvalidArgumentError('expected a port number 0-65535');
  return n;
}

async function readSeed(file: string): Promise<{ name: string; json: unknown }> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(`the demo workspace ${file} cannot be read: ${(error as Error).message}`, { cause: error });
  }
  const seed = json as { name?: unknown };
  return { name: typeof seed.name === 'string' ? seed.name : 'demo workspace', json };
}

/**
 * The demo writes only files it created itself: a new file, or one an earlier demo run made
 * (marked `created-by demo`, see mirror-claim.ts, and mirroring the demo workspace). Anything
 * else is refused before a byte of it is written: a sync would drop its tables.
 */
async function checkExistingFile(
  path: string, flag: string, workspaceId: string, openMirror: (url: string, o: { mustExist: true }) => Promise<Mirror>,
): Promise<'new' | 'earlier-demo'> {
  if (!existsSync(path)) return 'new';
  let mirror: Mirror;
  try {
    mirror = await openMirror(`sqlite:${path}`, { mustExist: true });
  } catch (error) {
    throw new ConfigError(`--db ${flag}: ${path} exists and is not a demo mirror (${(error as Error).message}); choose a new file with --db`);
  }
  let claim: MirrorClaim;
  try {
    claim = await readClaim(mirror);
  } finally {
    await mirror.close();
  }
  if (claim.createdBy !== DEMO_CREATOR) {
    const what = claim.workspaceId === undefined ? 'a mirror' : `a mirror of workspace ${claim.workspaceId}`;
    throw new ConfigError(`--db ${flag}: ${path} is ${what} not created by wsmirror demo, which writes only its own files; choose a new file with --db`);
  }
  if (claim.workspaceId !== workspaceId) {
    throw new ConfigError(`--db ${flag}: ${path} mirrors workspace ${claim.workspaceId ?? '(none recorded)'}, not the demo's ${workspaceId}; choose a new file with --db`);
  }
  return 'earlier-demo';
}

/**
 * Each run serves a new sample workspace, so an earlier run's file is made again from nothing:
 * records added or removed while it ran, and edits still in its outbox, belong to an emulator
 * that is gone. Afterwards the file holds exactly the sample workspace.
 */
function removeDemoFile(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${path}${suffix}`, { force: true });
}

// ---- what the demo prints ---------------------------------------------------------------------

const SQL_WORDS = new Set(
  ('abort action add after all alter and as asc between by case check collate column commit constraint create cross current default ' +
    'delete desc distinct drop else end escape except exists filter for foreign from full glob group having if in index inner insert ' +
    'intersect into is isnull join key left like limit match natural not notnull null of offset on or order outer over primary ' +
    'references regexp right rollback row rows select set table then to transaction union unique update using values view when ' +
    'where window with').split(' '),
);

/** True for a name that needs no quoting in SQL nor inside a double-quoted shell word. */
function plainName(name: string): boolean {
  return /^[a-z_][a-z0-9_]*$/.test(name) && !SQL_WORDS.has(name);
}

/** A word for a POSIX shell, quoted only when it has to be. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Double-quoted for a POSIX shell, so the SQL inside keeps its single-quoted literals readable. */
export function shellDoubleQuoted(text: string): string {
  return `"${text.replace(/["$`\\]/g, '\\$&')}"`;
}

export interface ExampleQuery {
  sql: string;
  /** The table it reads, for the curl example. */
  tableId: string;
  module: string;
  table: string;
  /** A field the curl example may set to a number, if there is one. */
  numberField: string | undefined;
}

/**
 * A query over the first table with rows and a choice column: a few columns, with the choice's
 * option ids joined to `_wsmirror_choice_options` for their names.
 */
export function exampleQuery(catalog: Catalog, rows: ReadonlyMap<string, number>): ExampleQuery | undefined {
  const tables = [...catalog.tables].sort((a, b) => (a.sqlName < b.sqlName ? -1 : 1));
  for (const t of tables) {
    if (!plainName(t.sqlName) || (rows.get(t.tableId) ?? 0) === 0) continue;
    const fields = catalog.fields.filter((f) => f.tableId === t.tableId && plainName(f.columnName)).sort((a, b) => a.position - b.position);
    const choice = fields.find((f) => f.fieldType === 'choice' && Array.isArray(f.options) && f.options.length > 0);
    if (!choice) continue;
    const text = fields.find((f) => f.fieldType === 'string');
    const number = fields.find((f) => f.fieldType === 'number' && !f.readOnly);
    const columns = [
      text ? `t.${text.columnName}` : 't.id',
      `o.name AS ${choice.columnName}`,
      ...(number ? [`t.${number.columnName}`] : []),
    ];
    const sql = `SELECT ${columns.join(', ')} FROM ${t.sqlName} t LEFT JOIN _wsmirror_choice_options o`
      + ` ON o.sql_table = '${t.sqlName}' AND o.column_name = '${choice.columnName}' AND o.option_id = t.${choice.columnName}`
      + ' ORDER BY t.id';
    return { sql, tableId: t.tableId, module: t.moduleName, table: t.tableName, numberField: number?.fieldName };
  }
  return undefined;
}

/** The file as the user would type it: relative to the working directory when inside it. */
function shownPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? `./${rel}` : path;
}

/** How to run wsmirror again from here: `./bin/wsmirror` in a checkout (`npm start`), else `wsmirror`. */
function commandName(cwd: string): string {
  const script = process.argv[1];
  if (script === undefined) return 'wsmirror';
  const rel = relative(cwd, script);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? `./${rel}` : 'wsmirror';
}

async function rowCounts(mirror: Mirror, catalog: Catalog): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const t of catalog.tables) counts.set(t.tableId, await mirror.countRows(t.tableId));
  return counts;
}

async function firstIdOf(mirror: Mirror, tableId: string): Promise<number | undefined> {
  for await (const id of mirror.streamIds(tableId, { pageSize: 1 })) return id;
  return undefined;
}

function tableLines(catalog: Catalog, rows: ReadonlyMap<string, number>): string[] {
  const cells = [
    ['TABLE', 'SQL TABLE', 'ROWS'],
    ...[...catalog.tables]
      .sort((a, b) => (a.sqlName < b.sqlName ? -1 : 1))
      .map((t) => [`${t.moduleName}.${t.tableName}`, t.sqlName, String(rows.get(t.tableId) ?? 0)]),
  ];
  const widths = [0, 1, 2].map((i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells.map((r) => `  ${r[0]!.padEnd(widths[0]!)}  ${r[1]!.padEnd(widths[1]!)}  ${r[2]!.padStart(widths[2]!)}`);
}

interface WalkthroughOptions {
  seedName: string;
  /** The mirror file as shown to the user. */
  file: string;
  /** How to run wsmirror from here. */
  self: string;
  /** With `--keep-running`: where the emulator stays up. */
  emulator: { url: string; apiKey: string; workspaceId: string } | undefined;
}

/** What the demo prints once the mirror is current: plain text for a person, not for scripts. */
async function walkthrough(mirror: Mirror, o: WalkthroughOptions): Promise<string> {
  const catalog = await mirror.readCatalog();
  const rows = await rowCounts(mirror, catalog);
  const example = exampleQuery(catalog, rows);
  const out: string[] = [
    `wsmirror demo: the sample workspace "${o.seedName}", served by an embedded emulator, is mirrored into SQLite.`,
    '',
    `Mirror: ${o.file}`,
    '',
    ...tableLines(catalog, rows),
    '',
    'The _wsmirror_* tables describe the mirror (tables, fields, choice options, outbox).',
  ];
  if (example) {
    out.push(
      '',
      `Try a query (${example.module}.${example.table}, with choice option ids joined to their names):`,
      '',
      `  sqlite3 ${shellWord(o.file)} ${shellDoubleQuoted(example.sql)}`,
    );
  }
  const env = `WSMIRROR_MIRROR_URL=${shellWord(`sqlite:${o.file}`)}`;
  out.push('', 'Check the mirror at any time:', '', `  ${env} ${shellWord(o.self)} status`);
  out.push(
    '',
    'Each table has a readable view beside it (crm__companies_v: option labels and referenced records spelled out).',
    'The data dictionary of every table, view and column (add --erd for a Mermaid diagram):',
    '',
    `  ${env} ${shellWord(o.self)} schema`,
  );
  if (o.emulator === undefined) {
    out.push('', `Run ${shellWord(o.self)} demo --keep-running to keep the emulator up and watch its changes reach the mirror.`);
    return `${out.join('\n')}\n`;
  }
  const { url, apiKey, workspaceId } = o.emulator;
  const records = `${url}/api/v1/workspace/${workspaceId}/modules/${example?.module ?? 'crm'}/tables/${example?.table ?? 'companies'}/records`;
  const auth = shellWord(`Authorization: Bearer ${apiKey}`);
  out.push(
    '',
    `The emulator stays up at ${url}, with the API key ${apiKey} (made for this run only).`,
    `wsmirror pulls its changes every ${DEMO_SCHEDULE}. List records, or change one and run the query again:`,
    '',
    `  curl -H ${auth} ${records}`,
  );
  const firstId = example === undefined ? undefined : await firstIdOf(mirror, example.tableId);
  if (example?.numberField !== undefined && firstId !== undefined) {
    const body = JSON.stringify({ records: [{ id: firstId, [example.numberField]: 500 }] });
    out.push(`  curl -X PATCH -H ${auth} -H 'Content-Type: application/json' -d ${shellWord(body)} ${records}`);
  }
  out.push('', 'Press Ctrl-C to stop.');
  return `${out.join('\n')}\n`;
}

// ---- the command ------------------------------------------------------------------------------

export function defineDemoCommand(program: Command): Command {
  return program
    .command('demo')
    .description('zero-configuration first run: an embedded emulator with a sample workspace, mirrored into a local SQLite file')
    .option('--db <file>', 'the SQLite mirror file (reused by later runs)', DEFAULT_DB)
    .option('--port <port>', 'port of the embedded emulator on 127.0.0.1 (0 = any free port)', port, 0)
    .option('--keep-running', `keep the emulator up and pull its changes every ${DEMO_SCHEDULE} until Ctrl-C`)
    .action(async (flags: DemoFlags) => {
      const cwd = process.cwd();
      const dbPath = resolve(cwd, flags.db);
      const [emulator, { openMirror }, { resolveConfig }, { commandLogger }, { openSyncCycle }, { runSyncDaemon }, { Metrics }] = await Promise.all([
        import('../../emulator/index.ts'),
        import('../../mirror/index.ts'),
        import('../../daemon/load-config.ts'),
        import('../command-config.ts'),
        import('../../daemon/sync-cycle.ts'),
        import('../../daemon/sync-daemon.ts'),
        import('../../daemon/metrics.ts'),
      ]);
      const seed = await readSeed(DEMO_SEED_FILE);
      const workspaceId = emulator.DEFAULT_WORKSPACE_ID;
      const existing = await checkExistingFile(dbPath, flags.db, workspaceId, openMirror);

      // A fresh key per run, for this local emulator only: printing it is safe and useful.
      const apiKey = `demo-${randomBytes(12).toString('hex')}`;
      const app = await emulator.buildServer({ workspaceId, apiKeys: [{ key: apiKey, grants: 'all' }], seed: seed.json });
      try {
        let url: string;
        try {
          url = await emulator.listen(app, { host: '127.0.0.1', port: flags.port });
        } catch (error) {
          throw new ConfigError(`--port ${flags.port}: the demo emulator cannot listen on 127.0.0.1: ${(error as Error).message}`, { cause: error });
        }
        // Only the log level is taken from the environment: WSMIRROR_MIRROR_URL or
        // WSMIRROR_BASE_URL meant for a real mirror must not redirect the demo.
        const level = process.env.WSMIRROR_LOG_LEVEL;
        const config = resolveConfig(
          {
            upstream: { baseUrl: url, apiKey, workspaceId },
            mirror: { url: `sqlite:${dbPath}` },
            sync: { schedule: DEMO_SCHEDULE },
            http: { port: 0 },
            log: { level: 'warn' },
          },
          { env: level === undefined ? {} : { WSMIRROR_LOG_LEVEL: level }, cwd, source: 'wsmirror demo' },
        );
        // Logs go to stderr: stdout is the walkthrough.
        const logger = commandLogger(config, { toStderr: true });
        if (existing === 'earlier-demo') removeDemoFile(dbPath);
        const metrics = new Metrics();
        const cycle = await openSyncCycle(config, { logger, metrics, demo: true });
        try {
          const report = await cycle.run({ forceFullScan: true });
          const failed = report.tables.filter((t) => t.action === 'failed');
          if (failed.length > 0) {
            for (const t of failed) process.stderr.write(`wsmirror demo: ${t.table}: ${t.error?.message ?? 'failed'}\n`);
            process.exitCode = EXIT.syncFailed;
            return;
          }
          process.stdout.write(await walkthrough(cycle.mirror, {
            seedName: seed.name,
            file: shownPath(dbPath, cwd),
            self: commandName(cwd),
            emulator: flags.keepRunning ? { url, apiKey, workspaceId } : undefined,
          }));
          if (!flags.keepRunning) return;
          await runSyncDaemon(config, { logger, cycle: { cycle, metrics }, runOnStart: false });
        } finally {
          await cycle.close();
        }
      } finally {
        await app.close();
      }
    });
}
