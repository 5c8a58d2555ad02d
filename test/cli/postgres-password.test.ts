import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testPgUrl } from '../helpers/dialects.ts';
import { startPasswordProxy, type PasswordProxy } from '../helpers/password-proxy.ts';
import { daemonsOnPostgres } from '../helpers/postgres-daemon-suite.ts';
import { runWsmirror } from '../helpers/processes.ts';

/**
 * The Postgres password need not be in mirror.url: wsmirror takes it, as libpq does, from the
 * URL, else PGPASSWORD, else the password file (PGPASSFILE, default ~/.pgpass). Checked on the
 * wire: a proxy in front of the test server asks for the password and keeps what it gets.
 */
describe('Postgres: where the password comes from (real processes)', () => {
  const { mirrorOf } = daemonsOnPostgres('wsm_pass');
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-pgpass-'));
  let proxy: PasswordProxy;
  beforeAll(async () => {
    proxy = await startPasswordProxy(testPgUrl!);
  });
  afterAll(async () => {
    await proxy?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** `sync` through the proxy, the URL's password set to `password` (none when undefined). */
  const syncWith = async (password: string | undefined, extra: Record<string, string>) => {
    const { env } = mirrorOf();
    const url = new URL(proxy.url);
    if (password !== undefined) url.password = password;
    proxy.passwords.length = 0;
    const res = await runWsmirror(['sync'], { ...env, WSMIRROR_MIRROR_URL: url.toString(), ...extra }, { killAfterMs: 30_000 });
    expect(res.code, res.stderr).toBe(0);
    return { res, sent: [...new Set(proxy.passwords)] };
  };

  it('reads the password file named by PGPASSFILE, without pg\'s DeprecationWarning', async () => {
    const file = join(dir, 'pgpass');
    writeFileSync(file, `# wsmirror\n127.0.0.1:*:*:postgres:pw-from-pgpass\n`);
    chmodSync(file, 0o600);
    const { res, sent } = await syncWith(undefined, { PGPASSFILE: file });
    expect(sent).toEqual(['pw-from-pgpass']);
    expect(res.stderr).not.toMatch(/DeprecationWarning|pgpass support is deprecated/);
  }, 40_000);

  it('takes PGPASSWORD before the file, and the URL\'s password before both', async () => {
    const file = join(dir, 'pgpass-2');
    writeFileSync(file, `*:*:*:*:pw-from-pgpass\n`);
    chmodSync(file, 0o600);
    expect((await syncWith(undefined, { PGPASSFILE: file, PGPASSWORD: 'pw-from-env' })).sent).toEqual(['pw-from-env']);
    expect((await syncWith('pw-from-url', { PGPASSFILE: file, PGPASSWORD: 'pw-from-env' })).sent).toEqual(['pw-from-url']);
  }, 40_000);
});
