import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { CONFIG_KEYS } from '../../src/daemon/config-variables.ts';
import type { Config } from '../../src/daemon/config-types.ts';
import { unknownEnvironmentVariables } from '../../src/daemon/config-variables.ts';
import { loadConfig, redactConfig, resolveConfig } from '../../src/daemon/load-config.ts';
import { compileTableFilter } from '../../src/mirror/table-filter.ts';
import { resolveClientOptions } from '../../src/client/client-options.ts';
import { SYNC_DEFAULTS } from '../../src/sync/sync-options.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-config-'));
  dirs.push(dir);
  return dir;
}

function write(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const KEY = 'wsk_live_0123456789abcdef';
const REQUIRED_ENV = {
  WSMIRROR_BASE_URL: 'https://upstream.example.com',
  WSMIRROR_WORKSPACE_ID: 'demo00000001',
  WSMIRROR_API_KEY: KEY,
};

/** Runs fn, expects a ConfigError, returns it. */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe('CONFIG_INVALID');
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError, nothing was thrown');
}

function loadYaml(yaml: string, env: Record<string, string> = REQUIRED_ENV, dir = tempDir()): Config {
  write(dir, 'wsmirror.yaml', yaml);
  return loadConfig({ env, cwd: dir });
}

function yamlError(yaml: string, env: Record<string, string> = REQUIRED_ENV, dir = tempDir()): string {
  write(dir, 'wsmirror.yaml', yaml);
  return configError(() => loadConfig({ env, cwd: dir })).message;
}

describe('defaults', () => {
  it('gives every documented default when only the required settings are present', () => {
    const dir = tempDir();
    const config = loadConfig({ env: REQUIRED_ENV, cwd: dir });
    expect(config).toEqual({
      configFile: null,
      upstream: {
        baseUrl: 'https://upstream.example.com',
        apiKey: KEY,
        apiKeySource: 'WSMIRROR_API_KEY',
        workspaceId: 'demo00000001',
        timeoutMs: 30_000,
        retries: 6,
        concurrency: 4,
        maxResponseBytes: 32 * 1024 * 1024,
      },
      mirror: { dialect: 'sqlite', url: 'sqlite:./wsmirror.db', urlSource: 'default', path: join(dir, 'wsmirror.db'), relativeTo: dir, pgSchema: 'public', minFreeBytes: 64 * 1024 ** 2 },
      tables: { include: ['*'], exclude: [], sources: { include: 'default', exclude: 'default' }, conflictPolicy: 'local-wins', conflictPolicies: [] },
      sync: {
        schedule: { kind: 'interval', everyMs: 30_000 },
        lookbackMs: 10_000,
        pageSize: 100,
        backfillConcurrency: 4,
        fullScanEveryMs: 600_000,
        maxDeleteShare: 0.5,
        maxLagMs: 300_000,
        createSettleMs: 60_000,
      },
      http: { host: '127.0.0.1', port: 9464 },
      log: { level: 'info', format: 'auto', progressIntervalMs: 10_000 },
      warnings: [],
    });
  });

  it('returns a deeply frozen object', () => {
    const config = loadConfig({ env: REQUIRED_ENV, cwd: tempDir() });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.sync.schedule)).toBe(true);
    expect(Object.isFrozen(config.tables.include)).toBe(true);
    expect(() => {
      (config.sync as { pageSize: number }).pageSize = 5;
    }).toThrow(TypeError);
  });
});

describe('file and environment', () => {
  const FILE = `
upstream:
  baseUrl: https://file.example.com/
  workspaceId: file00000001
  apiKey: file-key-0123456789
  timeout: 45s
mirror:
  url: sqlite:data/mirror.db
  pgSchema: from_file
sync:
  schedule: 1m
  lookback: 20s
http:
  port: 9000
log:
  level: warn
`;

  it('reads the file when no variable overrides it', () => {
    const dir = tempDir();
    const path = write(dir, 'wsmirror.yaml', FILE);
    const config = loadConfig({ env: {}, cwd: dir });
    expect(config.configFile).toBe(path);
    expect(config.upstream.baseUrl).toBe('https://file.example.com');
    expect(config.upstream.workspaceId).toBe('file00000001');
    expect(config.upstream.apiKey).toBe('file-key-0123456789');
    expect(config.upstream.apiKeySource).toBe('wsmirror.yaml upstream.apiKey');
    expect(config.upstream.timeoutMs).toBe(45_000);
    expect(config.mirror).toMatchObject({
      dialect: 'sqlite', path: join(dir, 'data/mirror.db'), relativeTo: dir, pgSchema: 'from_file',
      urlSource: { label: 'wsmirror.yaml', configFile: path },
    });
    expect(config.sync.schedule).toEqual({ kind: 'interval', everyMs: 60_000 });
    expect(config.sync.lookbackMs).toBe(20_000);
    expect(config.http.port).toBe(9000);
    expect(config.log.level).toBe('warn');
  });

  it('lets each contract variable override the file', () => {
    const dir = tempDir();
    write(dir, 'wsmirror.yaml', FILE);
    const keyFile = write(dir, 'key.txt', 'env-file-key-0123456789\n');
    const cases: { env: Record<string, string>; check: (c: Config) => unknown; expected: unknown }[] = [
      { env: { WSMIRROR_BASE_URL: 'http://env.example.com:8787/' }, check: (c) => c.upstream.baseUrl, expected: 'http://env.example.com:8787' },
      { env: { WSMIRROR_API_KEY: 'env-key-0123456789' }, check: (c) => [c.upstream.apiKey, c.upstream.apiKeySource], expected: ['env-key-0123456789', 'WSMIRROR_API_KEY'] },
      { env: { WSMIRROR_API_KEY_FILE: keyFile }, check: (c) => [c.upstream.apiKey, c.upstream.apiKeySource], expected: ['env-file-key-0123456789', keyFile] },
      { env: { WSMIRROR_WORKSPACE_ID: 'envx00000001' }, check: (c) => c.upstream.workspaceId, expected: 'envx00000001' },
      {
        env: { WSMIRROR_MIRROR_URL: 'postgres://mirror:pw@db.example.com:5432/bi' },
        check: (c) => c.mirror,
        expected: { dialect: 'postgres', url: 'postgres://mirror:pw@db.example.com:5432/bi', urlSource: { variable: 'WSMIRROR_MIRROR_URL' }, pgSchema: 'from_file', minFreeBytes: 64 * 1024 ** 2 },
      },
      { env: { WSMIRROR_PG_SCHEMA: 'from_env' }, check: (c) => c.mirror.pgSchema, expected: 'from_env' },
      { env: { WSMIRROR_SCHEDULE: '*/5 * * * *' }, check: (c) => c.sync.schedule, expected: { kind: 'cron', expression: '*/5 * * * *' } },
      { env: { WSMIRROR_SCHEDULE: '2m' }, check: (c) => c.sync.schedule, expected: { kind: 'interval', everyMs: 120_000 } },
      { env: { WSMIRROR_HTTP_PORT: '0' }, check: (c) => c.http.port, expected: 0 },
      { env: { WSMIRROR_LOG_LEVEL: 'debug' }, check: (c) => c.log.level, expected: 'debug' },
    ];
    for (const { env, check, expected } of cases) {
      expect(check(loadConfig({ env, cwd: dir })), JSON.stringify(env)).toEqual(expected);
    }
  });

  it('lets every other key be overridden by WSMIRROR_<SECTION>_<KEY>', () => {
    // One sample per key; the loop fails when a key is added without a case here.
    const samples: Record<string, [string, (c: Config) => unknown, unknown]> = {
      'upstream.timeout': ['1m30s', (c) => c.upstream.timeoutMs, 90_000],
      'upstream.retries': ['0', (c) => c.upstream.retries, 0],
      'upstream.concurrency': ['16', (c) => c.upstream.concurrency, 16],
      'upstream.maxResponseBytes': ['1.5MB', (c) => c.upstream.maxResponseBytes, 1.5 * 1024 * 1024],
      'mirror.minFreeSpace': ['1GB', (c) => c.mirror.minFreeBytes, 1024 ** 3],
      'tables.include': ['crm.*, sales.orders', (c) => c.tables.include, ['crm.*', 'sales.orders']],
      'tables.exclude': ['*.audit_log', (c) => c.tables.exclude, ['*.audit_log']],
      'tables.conflictPolicy': ['manual', (c) => c.tables.conflictPolicy, 'manual'],
      'tables.conflictPolicies': [
        'crm.deals=manual, finance.*=upstream-wins',
        (c) => c.tables.conflictPolicies,
        [{ pattern: 'crm.deals', policy: 'manual' }, { pattern: 'finance.*', policy: 'upstream-wins' }],
      ],
      'sync.lookback': ['0', (c) => c.sync.lookbackMs, 0],
      'sync.pageSize': ['25', (c) => c.sync.pageSize, 25],
      'sync.backfillConcurrency': ['2', (c) => c.sync.backfillConcurrency, 2],
      'sync.fullScanEvery': ['1h', (c) => c.sync.fullScanEveryMs, 3_600_000],
      'sync.maxDeleteShare': ['25%', (c) => c.sync.maxDeleteShare, 0.25],
      'sync.maxLag': ['90', (c) => c.sync.maxLagMs, 90_000],
      'sync.createSettle': ['2s', (c) => c.sync.createSettleMs, 2_000],
      'http.host': ['0.0.0.0', (c) => c.http.host, '0.0.0.0'],
      'log.progressInterval': ['500ms', (c) => c.log.progressIntervalMs, 500],
      'log.format': ['JSON', (c) => c.log.format, 'json'],
    };
    const contract = new Set([
      'WSMIRROR_BASE_URL', 'WSMIRROR_API_KEY', 'WSMIRROR_API_KEY_FILE', 'WSMIRROR_WORKSPACE_ID', 'WSMIRROR_MIRROR_URL',
      'WSMIRROR_PG_SCHEMA', 'WSMIRROR_SCHEDULE', 'WSMIRROR_HTTP_PORT', 'WSMIRROR_LOG_LEVEL',
    ]);
    const generic = CONFIG_KEYS.filter((key) => !contract.has(key.env));
    expect(generic.map((k) => k.path).sort()).toEqual(Object.keys(samples).sort());
    expect(CONFIG_KEYS.filter((key) => contract.has(key.env))).toHaveLength(contract.size);
    for (const key of generic) {
      const [value, check, expected] = samples[key.path]!;
      const config = loadYaml(FILE, { ...REQUIRED_ENV, [key.env]: value });
      expect(check(config), `${key.env}=${value}`).toEqual(expected);
    }
    expect(CONFIG_KEYS.find((k) => k.path === 'sync.fullScanEvery')?.env).toBe('WSMIRROR_SYNC_FULL_SCAN_EVERY');
  });

  it('derives the settle time of unanswered creates from upstream.timeout unless it is set', () => {
    const settle = (env: Record<string, string>) => loadConfig({ env: { ...REQUIRED_ENV, ...env }, cwd: tempDir() }).sync.createSettleMs;
    expect(settle({ WSMIRROR_UPSTREAM_TIMEOUT: '1s' })).toBe(60_000);
    expect(settle({ WSMIRROR_UPSTREAM_TIMEOUT: '45s' })).toBe(90_000);
    expect(settle({ WSMIRROR_UPSTREAM_TIMEOUT: '45s', WSMIRROR_SYNC_CREATE_SETTLE: '5s' })).toBe(5_000);
  });

  it('treats an empty variable as unset', () => {
    const config = loadYaml(FILE, { WSMIRROR_SYNC_LOOKBACK: '', WSMIRROR_BASE_URL: '  ' });
    expect(config.sync.lookbackMs).toBe(20_000);
    expect(config.upstream.baseUrl).toBe('https://file.example.com');
  });

  it('treats an empty key in the file as the default', () => {
    const config = loadYaml('sync:\n  lookback:\n  pageSize: 50\nhttp:\n');
    expect(config.sync.lookbackMs).toBe(10_000);
    expect(config.sync.pageSize).toBe(50);
    expect(config.http.port).toBe(9464);
  });
});

describe('one default per setting', () => {
  it('the client and the engine built without options behave as the configuration says by default', () => {
    const config = resolveConfig({}, { env: REQUIRED_ENV });
    const client = resolveClientOptions({ baseUrl: config.upstream.baseUrl, apiKey: KEY, workspaceId: config.upstream.workspaceId });
    expect({ retries: client.maxRetries, concurrency: client.concurrency, timeoutMs: client.timeoutMs, maxResponseBytes: client.maxResponseBytes })
      .toEqual({ retries: config.upstream.retries, concurrency: config.upstream.concurrency, timeoutMs: config.upstream.timeoutMs, maxResponseBytes: config.upstream.maxResponseBytes });
    expect({
      lookbackMs: SYNC_DEFAULTS.lookbackMs, pageSize: SYNC_DEFAULTS.pageSize, backfillConcurrency: SYNC_DEFAULTS.backfillConcurrency,
      fullScanEveryMs: SYNC_DEFAULTS.fullScanEveryMs, maxDeleteShare: SYNC_DEFAULTS.maxDeleteShare,
    }).toEqual({
      lookbackMs: config.sync.lookbackMs, pageSize: config.sync.pageSize, backfillConcurrency: config.sync.backfillConcurrency,
      fullScanEveryMs: config.sync.fullScanEveryMs, maxDeleteShare: config.sync.maxDeleteShare,
    });
  });

  it('the client refuses the base URLs and keys the configuration refuses', () => {
    for (const baseUrl of ['https://db.example.com/api/v1', 'ftp://db.example.com', 'https://db.example.com/?x=1']) {
      expect(() => resolveConfig({ upstream: { baseUrl } }, { env: { ...REQUIRED_ENV, WSMIRROR_BASE_URL: '' } })).toThrow(ConfigError);
      expect(() => resolveClientOptions({ baseUrl, apiKey: KEY, workspaceId: 'demo00000001' })).toThrow(ConfigError);
    }
    expect(() => resolveConfig({}, { env: { ...REQUIRED_ENV, WSMIRROR_API_KEY: 'two words' } })).toThrow(ConfigError);
    expect(() => resolveClientOptions({ baseUrl: 'https://db.example.com', apiKey: 'two words', workspaceId: 'demo00000001' })).toThrow(ConfigError);
  });
});

describe('which file is read', () => {
  it('reads --config, then WSMIRROR_CONFIG, then ./wsmirror.yaml', () => {
    const dir = tempDir();
    write(dir, 'wsmirror.yaml', 'sync:\n  pageSize: 1\n');
    write(dir, 'from-env.yaml', 'sync:\n  pageSize: 2\n');
    write(dir, 'from-flag.yaml', 'sync:\n  pageSize: 3\n');
    const env = { ...REQUIRED_ENV, WSMIRROR_CONFIG: 'from-env.yaml' };
    expect(loadConfig({ env: REQUIRED_ENV, cwd: dir }).sync.pageSize).toBe(1);
    expect(loadConfig({ env, cwd: dir }).sync.pageSize).toBe(2);
    expect(loadConfig({ env, cwd: dir, file: 'from-flag.yaml' }).sync.pageSize).toBe(3);
  });

  it('fails when a named file is missing, but not when ./wsmirror.yaml is', () => {
    const dir = tempDir();
    expect(loadConfig({ env: REQUIRED_ENV, cwd: dir }).configFile).toBeNull();
    const message = configError(() => loadConfig({ env: REQUIRED_ENV, cwd: dir, file: 'missing.yaml' })).message;
    expect(message).toBe('missing.yaml: cannot read the configuration file: no such file');
    const viaEnv = configError(() => loadConfig({ env: { ...REQUIRED_ENV, WSMIRROR_CONFIG: 'gone.yaml' }, cwd: dir }));
    expect(viaEnv.message).toContain('gone.yaml: cannot read');
  });

  it('reports YAML syntax errors with line and column', () => {
    const message = yamlError('sync:\n  pageSize: 10\n  pageSize: 20\n');
    expect(message).toMatch(/^wsmirror\.yaml: line 3, column 3: .*unique/);
    expect(yamlError('upstream:\n  baseUrl: "https://x\n')).toMatch(/^wsmirror\.yaml: line \d+, column \d+: Missing closing/);
  });

  it('rejects a file that is not a mapping of sections', () => {
    expect(yamlError('- upstream\n- mirror\n')).toBe(
      'wsmirror.yaml: must hold a mapping of sections (upstream, mirror, tables, sync, http, log), not a list',
    );
    expect(yamlError('sync: 30s\n')).toBe('wsmirror.yaml: sync: must be a mapping of keys to values');
  });
});

describe('bad values name the file, the key and the value', () => {
  const cases: [string, string][] = [
    ['sync:\n  lookback: ten\n', 'wsmirror.yaml: sync.lookback: "ten" is not a duration such as 10s'],
    ['upstream:\n  timeout: 0s\n', 'wsmirror.yaml: upstream.timeout: "0s" is not a duration above zero such as 30s'],
    ['sync:\n  createSettle: 999999999d\n', 'wsmirror.yaml: sync.createSettle: "999999999d" is longer than a year, the longest duration wsmirror takes'],
    ['sync:\n  pageSize: 500\n', 'wsmirror.yaml: sync.pageSize: 500 is not an integer from 1 to 100'],
    ['sync:\n  pageSize: 2.5\n', 'wsmirror.yaml: sync.pageSize: 2.5 is not an integer from 1 to 100'],
    ['upstream:\n  retries: [1]\n', 'wsmirror.yaml: upstream.retries: a list is not an integer from 0 to 100'],
    ['sync:\n  maxDeleteShare: 150%\n', 'wsmirror.yaml: sync.maxDeleteShare: "150%" is not a share from 0 to 1 such as 0.5 or 50%'],
    ['upstream:\n  maxResponseBytes: huge\n', 'wsmirror.yaml: upstream.maxResponseBytes: "huge" is not a size of at least 1024 bytes such as 64MB'],
    ['upstream:\n  baseUrl: ftp://files.example.com\n', 'wsmirror.yaml: upstream.baseUrl: "ftp://files.example.com" is not an http:// or https:// URL without query or fragment, such as https://db.example.com'],
    ['upstream:\n  baseUrl: https://x.example.com/api/v1\n', 'wsmirror.yaml: upstream.baseUrl: "https://x.example.com/api/v1" ends in /api/v1: give the base URL only, wsmirror adds the path'],
    ['upstream:\n  workspaceId: Demo\n', 'wsmirror.yaml: upstream.workspaceId: "Demo" is not a workspace id (exactly 12 characters of a-z and 0-9)'],
    ['mirror:\n  url: mysql://db/x\n', 'wsmirror.yaml: mirror.url: "mysql://db/x" is not sqlite:PATH or a postgres:// (postgresql://) URL'],
    ['mirror:\n  url: "sqlite:"\n', 'wsmirror.yaml: mirror.url: "sqlite:" is not sqlite:PATH or a postgres:// (postgresql://) URL'],
    ['mirror:\n  url: postgres://u:pw@db/x?sslmode=allow\n', 'wsmirror.yaml: mirror.url: "postgres://u:[Redacted]@db/x?sslmode=allow" sets sslmode=allow, which wsmirror cannot honour (it cannot fall back from plain text to TLS): use sslmode=disable or sslmode=require'],
    ['mirror:\n  url: postgres://db/x?sslmode=verify-ca\n', 'wsmirror.yaml: mirror.url: "postgres://db/x?sslmode=verify-ca" sets sslmode=verify-ca without sslrootcert=FILE, the certificate of the authority the server\'s must be signed by'],
    ['mirror:\n  url: postgres://db/x?sslmode=requre\n', 'wsmirror.yaml: mirror.url: "postgres://db/x?sslmode=requre" sets sslmode=requre: expected disable, prefer, require, verify-ca or verify-full (or no-verify)'],
    ['mirror:\n  pgSchema: ""\n', 'wsmirror.yaml: mirror.pgSchema: "" is not a Postgres schema name (1 to 63 bytes)'],
    ['sync:\n  schedule: every day\n', 'wsmirror.yaml: sync.schedule: "every day" is not a cron expression such as "*/5 * * * *" or an interval such as 30s (invalid configuration format (\'every day\'), exactly five, six, or seven space separated parts are required.)'],
    ['sync:\n  schedule: 0 0 30 2 *\n', 'wsmirror.yaml: sync.schedule: "0 0 30 2 *" never fires'],
    ['tables:\n  include: [crm.*, crm]\n', 'wsmirror.yaml: tables.include[1]: "crm" is not a table pattern such as crm.* or sales.orders (module.table, wildcards * and ?)'],
    ['tables:\n  exclude: 5\n', 'wsmirror.yaml: tables.exclude: must be a list of table patterns'],
    ['tables:\n  conflictPolicy: mine\n', 'wsmirror.yaml: tables.conflictPolicy: "mine" is not a conflict policy (local-wins, upstream-wins, manual)'],
    ['tables:\n  conflictPolicies:\n    crm.deals: theirs\n', 'wsmirror.yaml: tables.conflictPolicies["crm.deals"]: "theirs" is not a conflict policy (local-wins, upstream-wins, manual)'],
    ['tables:\n  conflictPolicies:\n    crm: manual\n', 'wsmirror.yaml: tables.conflictPolicies.crm: "crm" is not a table pattern such as crm.* or sales.orders (module.table, wildcards * and ?)'],
    ['tables:\n  conflictPolicies: [manual]\n', 'wsmirror.yaml: tables.conflictPolicies: must be a mapping of table pattern to conflict policy'],
    ['http:\n  port: 70000\n', 'wsmirror.yaml: http.port: 70000 is not an integer from 0 to 65535'],
    ['log:\n  level: verbose\n', 'wsmirror.yaml: log.level: "verbose" is not a log level (fatal, error, warn, info, debug, trace, silent)'],
    ['upstream:\n  apikey: x\n', 'wsmirror.yaml: upstream.apikey: unknown key (did you mean apiKey?)'],
    ['sync:\n  page_size: 10\n', 'wsmirror.yaml: sync.page_size: unknown key (did you mean pageSize?)'],
    ['sync:\n  frobnicate: 1\n', 'wsmirror.yaml: sync.frobnicate: unknown key (known keys: schedule, lookback, pageSize, backfillConcurrency, fullScanEvery, maxDeleteShare, maxLag, createSettle)'],
    ['upstrem:\n  baseUrl: x\n', 'wsmirror.yaml: upstrem: unknown key (did you mean upstream?)'],
  ];
  // Keys the required environment would override are given only in the file here.
  const fileOnly = { WSMIRROR_API_KEY: KEY };
  for (const [yaml, expected] of cases) {
    it(expected.replace(/^wsmirror\.yaml: /, ''), () => {
      expect(yamlError(yaml, yaml.startsWith('upstream:') ? fileOnly : REQUIRED_ENV)).toBe(expected);
    });
  }

  it('hides the password of a URL it quotes: all that follows the user part of a value that is no mirror URL', () => {
    const message = yamlError('mirror:\n  url: mysql://root:hunter22@db/x\n');
    expect(message).toBe('wsmirror.yaml: mirror.url: "mysql://root:[Redacted]" is not sqlite:PATH or a postgres:// (postgresql://) URL');
    expect(yamlError('mirror:\n  url: "postgres://u:hunter\\"22@127.0.0.1:99999/db"\n'))
      .toMatch(/^wsmirror\.yaml: mirror\.url: "postgres:\/\/u:\[Redacted\]" is not a valid postgres:\/\/ URL/);
  });

  it('says YAML read an unquoted value as a number, with its source text, and to quote it', () => {
    const fileOnly = { WSMIRROR_API_KEY: KEY };
    expect(yamlError('upstream:\n  workspaceId: 123456789012\n', fileOnly)).toBe(
      'wsmirror.yaml: upstream.workspaceId: YAML read 123456789012 (unquoted) as a number: quote it, as in workspaceId: "123456789012"',
    );
    expect(yamlError('upstream:\n  workspaceId: 000000000001\n', fileOnly)).toBe(
      'wsmirror.yaml: upstream.workspaceId: YAML read 000000000001 (unquoted) as the number 1: quote it, as in workspaceId: "000000000001"',
    );
    expect(yamlError('mirror:\n  pgSchema: 2024\n')).toBe(
      'wsmirror.yaml: mirror.pgSchema: YAML read 2024 (unquoted) as a number: quote it, as in pgSchema: "2024"',
    );
    expect(yamlError('tables:\n  include: [crm.*, 2024.10]\n')).toBe(
      'wsmirror.yaml: tables.include[1]: YAML read 2024.10 (unquoted) as the number 2024.1: quote it, as in "2024.10"',
    );
    // A number that would be wrong as text too keeps the plain message.
    expect(yamlError('tables:\n  include: [1e3]\n')).toBe(
      'wsmirror.yaml: tables.include[0]: 1000 is not a table pattern such as crm.* or sales.orders (module.table, wildcards * and ?)',
    );
    // The key is never shown, not even as YAML read it.
    const key = yamlError('upstream:\n  apiKey: 0123\n', {});
    expect(key).toBe('wsmirror.yaml: upstream.apiKey: YAML read the API key (unquoted) as a number: quote it, as in apiKey: "…" (value not shown)');
    // Quoted, the same values are accepted; numbers where numbers belong are still numbers.
    const config = loadYaml('upstream:\n  workspaceId: "000000000001"\nsync:\n  pageSize: 50\n', { WSMIRROR_API_KEY: KEY, WSMIRROR_BASE_URL: 'https://upstream.example.com' });
    expect(config.upstream.workspaceId).toBe('000000000001');
    expect(config.sync.pageSize).toBe(50);
  });

  it('reports a bad key variable together with the file\'s errors', () => {
    const message = yamlError('sync:\n  lookback: ten\n', { ...REQUIRED_ENV, WSMIRROR_API_KEY: 'has a space' });
    expect(message).toBe(
      'wsmirror.yaml: sync.lookback: "ten" is not a duration such as 10s; WSMIRROR_API_KEY: the API key must be a non-empty string without spaces or line breaks (value not shown)',
    );
  });

  it('reports every bad key at once', () => {
    const message = yamlError('sync:\n  lookback: ten\n  pageSize: 0\nhttp:\n  port: -1\n');
    expect(message.split('; ')).toEqual([
      'wsmirror.yaml: sync.lookback: "ten" is not a duration such as 10s',
      'wsmirror.yaml: sync.pageSize: 0 is not an integer from 1 to 100',
      'wsmirror.yaml: http.port: -1 is not an integer from 0 to 65535',
    ]);
  });

  it('names the environment variable when the bad value came from it', () => {
    const dir = tempDir();
    write(dir, 'wsmirror.yaml', 'sync:\n  lookback: 5s\n');
    const cases: [Record<string, string>, string][] = [
      [{ WSMIRROR_SYNC_LOOKBACK: 'ten' }, 'WSMIRROR_SYNC_LOOKBACK: "ten" is not a duration such as 10s'],
      [{ WSMIRROR_SCHEDULE: '61 * * * *' }, 'WSMIRROR_SCHEDULE: "61 * * * *" is not a cron expression'],
      [{ WSMIRROR_HTTP_PORT: 'http' }, 'WSMIRROR_HTTP_PORT: "http" is not an integer from 0 to 65535'],
      [{ WSMIRROR_TABLES_INCLUDE: 'crm.*,Bad' }, 'WSMIRROR_TABLES_INCLUDE: "Bad" is not a table pattern'],
      [{ WSMIRROR_MIRROR_URL: 'postgres//x' }, 'WSMIRROR_MIRROR_URL: "postgres//x" is not sqlite:PATH'],
      [{ WSMIRROR_WORKSPACE_ID: 'short' }, 'WSMIRROR_WORKSPACE_ID: "short" is not a workspace id'],
      [{ WSMIRROR_LOG_LEVEL: 'loud' }, 'WSMIRROR_LOG_LEVEL: "loud" is not a log level'],
    ];
    for (const [env, expected] of cases) {
      const message = configError(() => loadConfig({ env: { ...REQUIRED_ENV, ...env }, cwd: dir })).message;
      expect(message.startsWith(expected), message).toBe(true);
    }
  });
});

describe('table patterns', () => {
  it('accepts what the example documents: * and ? wildcards, and * alone', () => {
    const config = loadYaml('tables:\n  include: ["*", crm.*, "*.audit_log", sales.order?]\n  exclude: [crm.tmp_*]\n');
    expect(config.tables.include).toEqual(['*', 'crm.*', '*.audit_log', 'sales.order?']);
    expect(compileTableFilter(config.tables)('sales', 'orders')).toBe(true);
  });

  it('names the pattern at fault by its place in the list or by its variable', () => {
    expect(yamlError('tables:\n  include: [crm.*, sales.order?, a.b.c]\n')).toBe(
      'wsmirror.yaml: tables.include[2]: "a.b.c" is not a table pattern such as crm.* or sales.orders (module.table, wildcards * and ?)',
    );
    const message = configError(() => loadConfig({ env: { ...REQUIRED_ENV, WSMIRROR_TABLES_EXCLUDE: 'crm.tmp_?,crm' }, cwd: tempDir() })).message;
    expect(message).toBe('WSMIRROR_TABLES_EXCLUDE: "crm" is not a table pattern such as crm.* or sales.orders (module.table, wildcards * and ?)');
  });

  it('accepts exactly the patterns the mirror compiles', () => {
    const candidates = ['*', '*.*', 'crm.*', 'crm.order?', '?.x', 'crm', 'crm.', '.x', 'a.b.c', 'CRM.x', 'crm.x-y', '**', 'crm.(a|b)', 'a\\.b'];
    for (const pattern of candidates) {
      let configAccepts = true;
      try {
        resolveConfig({ tables: { include: [pattern] } }, { env: REQUIRED_ENV, cwd: tempDir() });
      } catch {
        configAccepts = false;
      }
      let mirrorAccepts = true;
      try {
        compileTableFilter({ include: [pattern] });
      } catch {
        mirrorAccepts = false;
      }
      expect(configAccepts, pattern).toBe(mirrorAccepts);
    }
  });
});

describe('required upstream settings', () => {
  it('names each missing setting and where to give it', () => {
    const dir = tempDir();
    const message = configError(() => loadConfig({ env: {}, cwd: dir })).message;
    expect(message.split('; ')).toEqual([
      'upstream.baseUrl is not set: set it in a configuration file (--config) or WSMIRROR_BASE_URL',
      'upstream.workspaceId is not set: set it in a configuration file (--config) or WSMIRROR_WORKSPACE_ID',
      'no API key: set WSMIRROR_API_KEY or WSMIRROR_API_KEY_FILE, upstream.apiKey or upstream.apiKeyFile in a configuration file, or provide the systemd credential wsmirror-api-key',
    ]);
    write(dir, 'wsmirror.yaml', 'sync:\n  pageSize: 10\n');
    expect(configError(() => loadConfig({ env: {}, cwd: dir })).message).toContain(
      'upstream.baseUrl is not set: set it in wsmirror.yaml or WSMIRROR_BASE_URL',
    );
  });

  it('leaves upstream null for commands that do not need it', () => {
    const config = loadConfig({ env: { WSMIRROR_MIRROR_URL: 'sqlite:/tmp/x.db' }, cwd: tempDir(), upstream: 'optional' });
    expect(config.upstream).toBeNull();
    expect(config.mirror).toMatchObject({ dialect: 'sqlite', path: '/tmp/x.db' });
    const unreadable = loadConfig({
      env: { ...REQUIRED_ENV, WSMIRROR_API_KEY: '', WSMIRROR_API_KEY_FILE: '/nonexistent/key' },
      cwd: tempDir(),
      upstream: 'optional',
    });
    expect(unreadable.upstream).toBeNull();
  });
});

describe('the API key', () => {
  const base = { WSMIRROR_BASE_URL: 'https://u.example.com', WSMIRROR_WORKSPACE_ID: 'demo00000001' };

  it('reads and trims a key file, relative to the working directory', () => {
    const dir = tempDir();
    write(dir, 'api-key', '  file-key-0123456789\n\n');
    const config = loadConfig({ env: { ...base, WSMIRROR_API_KEY_FILE: 'api-key' }, cwd: dir });
    expect(config.upstream.apiKey).toBe('file-key-0123456789');
    expect(config.upstream.apiKeySource).toBe(join(dir, 'api-key'));
  });

  it('reads upstream.apiKeyFile from the file', () => {
    const dir = tempDir();
    write(dir, 'k', 'yaml-file-key-0123456789\n');
    const config = loadYaml('upstream:\n  apiKeyFile: k\n', base, dir);
    expect(config.upstream.apiKey).toBe('yaml-file-key-0123456789');
  });

  it('falls back to the systemd credential, and only then', () => {
    const dir = tempDir();
    const credentials = join(dir, 'credentials');
    mkdirSync(credentials);
    write(credentials, 'wsmirror-api-key', 'credential-key-0123456789\n');
    const viaCredential = loadConfig({ env: { ...base, CREDENTIALS_DIRECTORY: credentials }, cwd: dir });
    expect(viaCredential.upstream.apiKey).toBe('credential-key-0123456789');
    expect(viaCredential.upstream.apiKeySource).toBe('systemd credential wsmirror-api-key');
    const envWins = loadConfig({ env: { ...base, CREDENTIALS_DIRECTORY: credentials, WSMIRROR_API_KEY: KEY }, cwd: dir });
    expect(envWins.upstream.apiKey).toBe(KEY);
    write(dir, 'wsmirror.yaml', 'upstream:\n  apiKey: yaml-key-0123456789\n');
    const fileWins = loadConfig({ env: { ...base, CREDENTIALS_DIRECTORY: credentials }, cwd: dir });
    expect(fileWins.upstream.apiKey).toBe('yaml-key-0123456789');
    // A credentials directory without our credential is not an error, just no key.
    expect(configError(() => loadConfig({ env: { ...base, CREDENTIALS_DIRECTORY: dir }, cwd: tempDir() })).message).toContain('no API key');
  });

  it('lets the environment replace a key given in the file', () => {
    const dir = tempDir();
    write(dir, 'env-key', 'env-file-key-0123456789');
    const config = loadYaml('upstream:\n  apiKey: yaml-key-0123456789\n', { ...base, WSMIRROR_API_KEY_FILE: 'env-key' }, dir);
    expect(config.upstream.apiKey).toBe('env-file-key-0123456789');
  });

  it('rejects two sources given at the same level', () => {
    const dir = tempDir();
    write(dir, 'k', 'file-key-0123456789');
    expect(configError(() => loadConfig({ env: { ...base, WSMIRROR_API_KEY: KEY, WSMIRROR_API_KEY_FILE: 'k' }, cwd: dir })).message).toBe(
      'WSMIRROR_API_KEY and WSMIRROR_API_KEY_FILE are both set: set only one',
    );
    expect(yamlError('upstream:\n  apiKey: yaml-key-0123456789\n  apiKeyFile: k\n', base)).toBe(
      'wsmirror.yaml: upstream.apiKey and upstream.apiKeyFile are both set: keep only one',
    );
  });

  it('names the key file that cannot be used, never its content', () => {
    const dir = tempDir();
    const missing = configError(() => loadConfig({ env: { ...base, WSMIRROR_API_KEY_FILE: 'nope' }, cwd: dir })).message;
    expect(missing).toBe(`WSMIRROR_API_KEY_FILE: cannot read the API key file ${join(dir, 'nope')}: no such file`);
    write(dir, 'empty', '\n');
    expect(configError(() => loadConfig({ env: { ...base, WSMIRROR_API_KEY_FILE: 'empty' }, cwd: dir })).message).toBe(
      `WSMIRROR_API_KEY_FILE: the API key file ${join(dir, 'empty')} is empty`,
    );
    write(dir, 'two-lines', 'first-secret-line-123\nsecond-secret-line-456\n');
    const twoLines = configError(() => loadConfig({ env: { ...base, WSMIRROR_API_KEY_FILE: 'two-lines' }, cwd: dir })).message;
    expect(twoLines).toContain(`WSMIRROR_API_KEY_FILE: the API key file ${join(dir, 'two-lines')} holds more than a key`);
    expect(twoLines).not.toContain('first-secret-line-123');
    expect(twoLines).not.toContain('second-secret');
    if (process.getuid?.() !== 0) {
      write(dir, 'locked', 'locked-key-0123456789');
      chmodSync(join(dir, 'locked'), 0o000);
      const locked = configError(() => loadConfig({ env: { ...base, WSMIRROR_API_KEY_FILE: 'locked' }, cwd: dir })).message;
      expect(locked).toContain('permission denied');
    }
  });

  it('reads at most 4KB of a key file and 1MB of a configuration file', () => {
    const dir = tempDir();
    write(dir, 'huge', 'k'.repeat(4097));
    expect(configError(() => loadConfig({ env: { ...base, WSMIRROR_API_KEY_FILE: 'huge' }, cwd: dir })).message).toBe(
      `WSMIRROR_API_KEY_FILE: the API key file ${join(dir, 'huge')} is larger than 4KB: it must hold only the key`,
    );
    write(dir, 'zero.yaml', '#'.repeat(1024 ** 2 + 1));
    expect(configError(() => loadConfig({ file: 'zero.yaml', env: REQUIRED_ENV, cwd: dir })).message).toBe(
      'zero.yaml: the configuration file is larger than 1MB',
    );
  });

  it('warns when other users can read the key file', () => {
    const dir = tempDir();
    write(dir, 'open', 'file-key-0123456789');
    chmodSync(join(dir, 'open'), 0o640);
    expect(loadConfig({ env: { ...base, WSMIRROR_API_KEY_FILE: 'open' }, cwd: dir }).warnings).toEqual([
      `WSMIRROR_API_KEY_FILE: the API key file ${join(dir, 'open')} is readable by other users (mode 0640): chmod 600 it`,
    ]);
    chmodSync(join(dir, 'open'), 0o600);
    expect(loadConfig({ env: { ...base, WSMIRROR_API_KEY_FILE: 'open' }, cwd: dir }).warnings).toEqual([]);
  });

  it('warns when other users can read the configuration file that holds the key (upstream.apiKey), as for a key file', () => {
    const dir = tempDir();
    const yaml = 'upstream:\n  baseUrl: http://127.0.0.1:9\n  workspaceId: ws0000000001\n  apiKey: inline-key-0123456789\n';
    write(dir, 'wsmirror.yaml', yaml);
    const file = join(dir, 'wsmirror.yaml');
    chmodSync(file, 0o644);
    const warnings = loadConfig({ file: 'wsmirror.yaml', env: {}, cwd: dir }).warnings;
    expect(warnings).toEqual([
      `wsmirror.yaml: upstream.apiKey is set in the configuration file ${file}, which is readable by other users (mode 0644): `
        + 'chmod 600 it, or give the key in a file of its own (upstream.apiKeyFile, WSMIRROR_API_KEY_FILE)',
    ]);
    expect(warnings.join('')).not.toContain('inline-key-0123456789');
    chmodSync(file, 0o600);
    expect(loadConfig({ file: 'wsmirror.yaml', env: {}, cwd: dir }).warnings).toEqual([]);
    // The key from the environment: the file holds none that counts, nothing to say.
    chmodSync(file, 0o644);
    write(dir, 'nokey.yaml', 'upstream:\n  baseUrl: http://127.0.0.1:9\n  workspaceId: ws0000000001\n');
    chmodSync(join(dir, 'nokey.yaml'), 0o644);
    expect(loadConfig({ file: 'nokey.yaml', env: { WSMIRROR_API_KEY: 'env-key-0123456789' }, cwd: dir }).warnings).toEqual([]);
  });

  it('never puts the key in an error message', () => {
    const secret = 'very-secret-key-0123456789';
    const messages = [
      // A malformed key.
      configError(() => loadConfig({ env: { ...base, WSMIRROR_API_KEY: `${secret} trailing words` }, cwd: tempDir() })).message,
      yamlError(`upstream:\n  apiKey: "${secret}\\nsecond line"\n`, base),
      // A key pasted into the wrong setting, with the real one in the environment.
      yamlError(`upstream:\n  workspaceId: ${secret}\n`, { ...base, WSMIRROR_API_KEY: secret, WSMIRROR_WORKSPACE_ID: '' }),
      // A key under a misspelt name, and a key given next to other errors.
      yamlError(`upstream:\n  api_key: ${secret}\n`, base),
      yamlError(`upstream:\n  apiKey: ${secret}\nsync:\n  lookback: ten\n`, base),
    ];
    expect(messages[0]).toBe('WSMIRROR_API_KEY: the API key must be a non-empty string without spaces or line breaks (value not shown)');
    expect(messages[1]).toBe('wsmirror.yaml: upstream.apiKey: the API key must be a non-empty string without spaces or line breaks (value not shown)');
    expect(messages[2]).toContain('upstream.workspaceId: "[Redacted]" is not a workspace id');
    expect(messages[3]).toBe('wsmirror.yaml: upstream.api_key: unknown key (did you mean apiKey?)');
    for (const message of messages) expect(message).not.toContain(secret);
  });
});

describe('settings of the other dialect', () => {
  it('warns, naming the setting, when a Postgres schema other than the default is set for a SQLite mirror', () => {
    const dir = tempDir();
    const unused = (where: string) => `${where}: mirror.pgSchema "foo" is set, but the mirror is a SQLite file (sqlite:./m.db): `
      + 'a Postgres schema does not apply to it and is ignored; remove the setting, or set mirror.url to a postgres:// URL';
    write(dir, 'wsmirror.yaml', 'mirror:\n  url: sqlite:./m.db\n  pgSchema: foo\n');
    expect(loadConfig({ env: REQUIRED_ENV, cwd: dir }).warnings).toEqual([unused('wsmirror.yaml')]);
    write(dir, 'wsmirror.yaml', 'mirror:\n  url: sqlite:./m.db\n');
    expect(loadConfig({ env: { ...REQUIRED_ENV, WSMIRROR_PG_SCHEMA: 'foo' }, cwd: dir }).warnings).toEqual([unused('WSMIRROR_PG_SCHEMA')]);
    // Unset or the default on SQLite (as the example file has it), or set on Postgres: nothing to say.
    expect(loadConfig({ env: { ...REQUIRED_ENV, WSMIRROR_PG_SCHEMA: 'public' }, cwd: dir }).warnings).toEqual([]);
    expect(loadConfig({ env: REQUIRED_ENV, cwd: dir }).warnings).toEqual([]);
    const postgres = { ...REQUIRED_ENV, WSMIRROR_MIRROR_URL: 'postgres://bi@db.example.com/bi', WSMIRROR_PG_SCHEMA: 'foo' };
    expect(loadConfig({ env: postgres, cwd: dir }).warnings).toEqual([]);
  });
});

describe('helpers', () => {
  it('redactConfig hides the key and the mirror password', () => {
    const config = loadConfig({
      env: { ...REQUIRED_ENV, WSMIRROR_MIRROR_URL: 'postgresql://bi:s3cretpw@db:5432/mirror' },
      cwd: tempDir(),
    });
    const shown = JSON.stringify(redactConfig(config));
    expect(shown).not.toContain(KEY);
    expect(shown).not.toContain('s3cretpw');
    expect(shown).toContain('postgresql://bi:[Redacted]@db:5432/mirror');
    expect(config.mirror.url).toBe('postgresql://bi:s3cretpw@db:5432/mirror');
  });

  it('lists WSMIRROR_ variables that configure nothing', () => {
    expect(
      unknownEnvironmentVariables({
        WSMIRROR_SYNC_LOOKBAK: '1s',
        WSMIRROR_SYNC_LOOKBACK: '1s',
        WSMIRROR_TEST_PG_URL: 'x',
        WSMIRROR_CONFIG: 'x',
        WSMIRROR_UPSTREAM_BASE_URL: 'x',
        HOME: '/root',
      }),
    ).toEqual(['WSMIRROR_SYNC_LOOKBAK', 'WSMIRROR_UPSTREAM_BASE_URL']);
  });

  it('resolveConfig validates an object the same way, named by its source', () => {
    const config = resolveConfig(
      { upstream: { baseUrl: 'http://127.0.0.1:8787', workspaceId: 'demo00000001', apiKey: 'demo-key-000001' }, sync: { schedule: '2s' } },
      { env: {}, cwd: '/srv', source: 'demo' },
    );
    expect(config.sync.schedule).toEqual({ kind: 'interval', everyMs: 2000 });
    expect(config.mirror).toMatchObject({ path: '/srv/wsmirror.db' });
    expect(configError(() => resolveConfig({ sync: { pagesize: 1 } }, { env: REQUIRED_ENV, source: 'demo' })).message).toBe(
      'demo: sync.pagesize: unknown key (did you mean pageSize?)',
    );
  });
});
