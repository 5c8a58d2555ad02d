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

  /** `sync` through the proxy, the URL's password set to `password` (none when undefined); `code` is the exit code it must end with. */
  const syncWith = async (password: string | undefined, extra: Record<string, string>, code = 0) => {
    const { env } = mirrorOf();
    const url = new URL(proxy.url);
    if (password !== undefined) url.password = password;
    proxy.passwords.length = 0;
    const res = await runWsmirror(['sync'], { ...env, WSMIRROR_MIRROR_URL: url.toString(), ...extra }, { killAfterMs: 30_000 });
    expect(res.code, res.stderr).toBe(code);
    return { res, sent: [...new Set(proxy.passwords)] };
  };

  /** A password file of mode 0600 holding `lines`. */
  const passwordFile = (name: string, lines: string[], mode = 0o600) => {
    const file = join(dir, name);
    writeFileSync(file, `${lines.join('\n')}\n`);
    chmodSync(file, mode);
    return file;
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

  it('takes the first matching line of the file, as libpq does: a catch-all after a specific line is not sent', async () => {
    const file = passwordFile('pgpass-order', [
      '127.0.0.1:*:*:someone_else:pw-other-role',
      '127.0.0.1:*:*:postgres:pw-specific',
      '*:*:*:*:pw-catch-all',
    ]);
    expect((await syncWith(undefined, { PGPASSFILE: file })).sent).toEqual(['pw-specific']);
    const first = passwordFile('pgpass-catch-all-first', ['*:*:*:*:pw-catch-all', '127.0.0.1:*:*:postgres:pw-specific']);
    expect((await syncWith(undefined, { PGPASSFILE: first })).sent).toEqual(['pw-catch-all']);
  }, 60_000);

  it('reads the file when PGPASSWORD is empty, as libpq does', async () => {
    const file = passwordFile('pgpass-empty-env', ['127.0.0.1:*:*:postgres:pw-from-pgpass']);
    expect((await syncWith(undefined, { PGPASSFILE: file, PGPASSWORD: '' })).sent).toEqual(['pw-from-pgpass']);
  }, 40_000);

  it('reads \\: and \\\\ escapes, skips comments, and takes a field of * for anything', async () => {
    const file = passwordFile('pgpass-escapes', [
      '# 127.0.0.1:*:*:postgres:pw-commented-out',
      '127.0.0.1:*:*:postgres\\:x:pw-of-another-role',
      '127.0.0.1:*:*:\\*:pw-of-a-role-named-star',
      '127.0.0.1:*:*:post\\gres:a\\:b\\\\c:d',
    ]);
    expect((await syncWith(undefined, { PGPASSFILE: file })).sent).toEqual(['a:b\\c']);
  }, 40_000);

  it('ignores a file group or other users can read, with libpq\'s warning, and says no password was found: exit 78', async () => {
    const file = passwordFile('pgpass-open', ['*:*:*:*:pw-from-pgpass'], 0o644);
    const { res, sent } = await syncWith(undefined, { PGPASSFILE: file }, 78);
    expect(sent).toEqual([]);
    expect(res.stderr).toContain(`WARNING: password file "${file}" has group or world access; permissions should be u=rw (0600) or less`);
    expect(res.stderr).toContain(`no password was found`);
    expect(res.stderr).toContain(file);
    expect(res.stderr).not.toContain('SASL');
  }, 40_000);

  it('says no password was found in the URL, PGPASSWORD or the password file, naming the file: exit 78', async () => {
    const file = passwordFile('pgpass-other-host', ['db.example.com:*:*:postgres:pw-other-host']);
    const { res, sent } = await syncWith(undefined, { PGPASSFILE: file }, 78);
    expect(sent).toEqual([]);
    expect(res.stderr).toMatch(/no password was found: none in the URL, PGPASSWORD is not set, and the password file .* has no line for 127\.0\.0\.1:\d+:[^:]+:postgres/);
    expect(res.stderr).toContain(file);
    const none = await syncWith(undefined, { PGPASSFILE: join(dir, 'no-such-file') }, 78);
    expect(none.res.stderr).toContain(`the password file ${join(dir, 'no-such-file')} (PGPASSFILE) does not exist`);
    // status too, at once: the session the server holds open for a password is ended.
    const url = new URL(proxy.url);
    const status = await runWsmirror(['status'], { ...mirrorOf().env, WSMIRROR_MIRROR_URL: url.toString(), PGPASSFILE: file }, { killAfterMs: 10_000 });
    expect(status.code, status.stderr).toBe(78);
    expect(status.stderr).toContain('no password was found');
  }, 40_000);
});
