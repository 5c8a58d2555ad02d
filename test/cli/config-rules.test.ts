import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror } from '../helpers/processes.ts';

/**
 * Each configuration rule lives once, in the module it configures: what the configuration
 * accepts is what that module then does. Real processes, so the check and the use are the ones
 * a user gets.
 */
describe('configuration rules are the modules\' own', () => {
  let emu: RunningEmulator;
  const cwd = mkdtempSync(join(tmpdir(), 'wsmirror-config-rules-'));

  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('sqlite://data/m.db names data/m.db under the working directory, for sync and for status alike', async () => {
    mkdirSync(join(cwd, 'data'), { recursive: true });
    const env = daemonEnv(emu, { url: 'sqlite://data/m.db' });
    const sync = await runWsmirror(['sync'], env, { cwd });
    expect(sync.code, sync.stderr).toBe(0);
    expect(existsSync(join(cwd, 'data', 'm.db'))).toBe(true);
    const status = await runWsmirror(['status', '--json'], { WSMIRROR_MIRROR_URL: 'sqlite://data/m.db' }, { cwd });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).mirror).toBe(`sqlite:${join(cwd, 'data', 'm.db')}`);
  });

  it('a relative mirror.url that names no file says it is relative to the working directory, which, and who set it', async () => {
    // The mirror beside the configuration file, and the command run from another directory.
    const etc = join(cwd, 'etc');
    const elsewhere = join(cwd, 'elsewhere');
    mkdirSync(etc, { recursive: true });
    mkdirSync(elsewhere, { recursive: true });
    const configFile = join(etc, 'wsmirror.yaml');
    writeFileSync(configFile, 'mirror:\n  url: sqlite:./rel.db\n');
    const sync = await runWsmirror(['sync', '--config', configFile], daemonEnv(emu, { url: '' }, { WSMIRROR_MIRROR_URL: '' }), { cwd: etc });
    expect(sync.code, sync.stderr).toBe(0);

    const status = await runWsmirror(['status', '--config', configFile], {}, { cwd: elsewhere });
    expect(status.code, status.stderr).toBe(78);
    const said = status.stderr.replace(/\s+/g, ' ');
    expect(said).toContain(`the SQLite mirror sqlite:./rel.db does not exist: mirror.url (set in ${configFile}) is a relative path, `
      + `resolved against the working directory ${elsewhere}, not against the configuration file's directory, so it names ${join(elsewhere, 'rel.db')}`);
    expect(said).toContain(`a file of that name is beside the configuration file: ${join(etc, 'rel.db')}`);
    expect(said).toContain(`set mirror.url to the mirror's absolute path (sqlite:${join(etc, 'rel.db')})`);
    // Following the message must not make a second mirror in the wrong directory.
    expect(said).not.toContain('run wsmirror sync to create it');
    expect(existsSync(join(elsewhere, 'rel.db'))).toBe(false);

    // From the environment, with no configuration file elsewhere, nothing suggests the mirror is
    // elsewhere: it does not exist yet, and a sync here creates it.
    const fromEnv = await runWsmirror(['status'], { WSMIRROR_MIRROR_URL: 'sqlite:other.db' }, { cwd: elsewhere });
    expect(fromEnv.code, fromEnv.stderr).toBe(78);
    expect(fromEnv.stderr.trim()).toBe(`wsmirror: configuration error: the SQLite mirror sqlite:${join(elsewhere, 'other.db')} does not exist `
      + `(no file ${join(elsewhere, 'other.db')}); run wsmirror sync to create it`);

    // check, run where a first sync is meant to make the mirror, still says the first sync makes it.
    const check = await runWsmirror(['check'], daemonEnv(emu, { url: 'sqlite:other.db' }), { cwd: elsewhere });
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toContain(`sqlite:${join(elsewhere, 'other.db')}`);
    expect(check.stdout).toContain('the first sync creates it');

    // An absolute path says only that there is no such file.
    const absolute = await runWsmirror(['status'], { WSMIRROR_MIRROR_URL: `sqlite:${join(elsewhere, 'abs.db')}` }, { cwd: elsewhere });
    expect(absolute.code).toBe(78);
    expect(absolute.stderr).toContain(`the SQLite mirror sqlite:${join(elsewhere, 'abs.db')} does not exist`);
    expect(absolute.stderr).not.toContain('relative');
  });

  it('before the first sync, status run beside its configuration file (or with none) says only that a sync creates the mirror', async () => {
    const here = join(cwd, 'first-sync');
    mkdirSync(here, { recursive: true });
    const expected = `wsmirror: configuration error: the SQLite mirror sqlite:${join(here, 'wsmirror.db')} does not exist `
      + `(no file ${join(here, 'wsmirror.db')}); run wsmirror sync to create it`;
    // No configuration file: the default mirror.url.
    const none = await runWsmirror(['status'], {}, { cwd: here });
    expect(none.code, none.stderr).toBe(78);
    expect(none.stderr.trim()).toBe(expected);
    // ./wsmirror.yaml in the working directory, with a relative mirror.url.
    writeFileSync(join(here, 'wsmirror.yaml'), 'mirror:\n  url: sqlite:./wsmirror.db\n');
    const beside = await runWsmirror(['status'], {}, { cwd: here });
    expect(beside.code, beside.stderr).toBe(78);
    expect(beside.stderr.trim()).toBe(expected);
  });

  it('a variable named by the generic rule for a key that has a contract name is warned about, naming the right variable', async () => {
    const env = {
      WSMIRROR_MIRROR_URL: `sqlite:${join(cwd, 'none.db')}`,
      WSMIRROR_LOG_FORMAT: 'json',
      WSMIRROR_MIRROR_PG_SCHEMA: 'mirror',
      WSMIRROR_UPSTREAM_BASE_URL: 'http://127.0.0.1:1',
      WSMIRROR_SYNC_SCHEDULE: '5s',
      WSMIRROR_UPSTREAM_API_KEY: 'not-shown-0123',
    };
    const status = await runWsmirror(['status'], env, { cwd });
    const warning = (status.stdout + status.stderr).split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l['level'] === 40 || l['level'] === 'warn');
    expect(String(warning?.['msg']), status.stdout + status.stderr).toContain('WSMIRROR_MIRROR_PG_SCHEMA (did you mean WSMIRROR_PG_SCHEMA, the variable of mirror.pgSchema?)');
    expect(String(warning?.['msg'])).toContain('WSMIRROR_UPSTREAM_BASE_URL (did you mean WSMIRROR_BASE_URL, the variable of upstream.baseUrl?)');
    expect(String(warning?.['msg'])).toContain('WSMIRROR_SYNC_SCHEDULE (did you mean WSMIRROR_SCHEDULE, the variable of sync.schedule?)');
    expect(String(warning?.['msg'])).toContain('WSMIRROR_UPSTREAM_API_KEY (did you mean WSMIRROR_API_KEY, the variable of upstream.apiKey?)');
    expect(status.stdout + status.stderr).not.toContain('not-shown-0123');
  });
});
