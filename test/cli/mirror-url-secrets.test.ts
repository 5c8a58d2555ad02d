import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { freePort } from '../helpers/free-port.ts';
import { runWsmirror } from '../helpers/processes.ts';

/**
 * The Postgres password in mirror.url never shows in what the one-shot commands print, whatever
 * characters it holds, and a mirror URL that is not one is not echoed with its password either:
 * real processes, a server nothing listens on (the message quotes the URL), stderr and --json.
 */
describe('the mirror URL\'s password in what commands print (real processes)', () => {
  let port: number;
  let emu: RunningEmulator;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-url-secrets-'));
  beforeAll(async () => {
    port = await freePort();
    emu = await startEmulator();
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const env = (url: string) => ({
    WSMIRROR_MIRROR_URL: url,
    WSMIRROR_BASE_URL: emu.url,
    WSMIRROR_API_KEY: emu.apiKey,
    WSMIRROR_WORKSPACE_ID: emu.workspaceId,
    WSMIRROR_LOG_LEVEL: 'warn',
    WSMIRROR_HTTP_PORT: '0',
  });

  /** Everything `sync`, `status`, `status --json`, `check` and `check --json` print for this environment. */
  const printed = async (vars: Record<string, string>) => {
    const out: string[] = [];
    for (const args of [['sync'], ['status'], ['status', '--json'], ['check'], ['check', '--json']]) {
      const res = await runWsmirror(args, vars, { killAfterMs: 30_000 });
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).not.toBe(0);
      out.push(res.stdout, res.stderr);
    }
    return out.join('\n');
  };

  it('hides a password holding " or ending in \\, and one after a user name holding "', async () => {
    for (const url of [
      `postgres://u2:ab"cdSECRET@127.0.0.1:${port}/db`,
      `postgres://u2:abSECRET\\@127.0.0.1:${port}/db`,
      `postgres://u"x:SECRETpw@127.0.0.1:${port}/db`,
      `postgres://u2:ab%22cd"SECRET\\"@127.0.0.1:${port}/db`,
    ]) {
      const text = await printed(env(url));
      expect(text, url).not.toMatch(/SECRET/);
      expect(text, url).toContain(`:[Redacted]@127.0.0.1:${port}/db`);
    }
  }, 120_000);

  it('hides passwords given as query parameters, their names percent-encoded or not', async () => {
    const text = await printed(env(`postgres://u@127.0.0.1:${port}/db?password=SECRET1&pass%77ord=SECRET2&sslpassword=SECRET3&application_name=bi`));
    expect(text).not.toMatch(/SECRET/);
    expect(text).toContain(`postgres://u@127.0.0.1:${port}/db?password=[Redacted]&pass%77ord=[Redacted]&sslpassword=[Redacted]&application_name=bi`);
  }, 60_000);

  it('does not echo a mirror URL that is not one with its password, from the environment or the file', async () => {
    for (const url of ['postgres:/u:SECRETpw@127.0.0.1/db', 'postgres//u:SECRETpw@127.0.0.1/db', 'u:SECRETpw@127.0.0.1/db', 'postgres://u:SECRETpw@127.0.0.1:99999/db']) {
      const text = await printed(env(url));
      expect(text, url).not.toMatch(/SECRET/);
      expect(text, url).toContain('WSMIRROR_MIRROR_URL');
      expect(text, url).toContain('[Redacted]');
    }
    const file = join(dir, 'wsmirror.yaml');
    writeFileSync(file, 'mirror:\n  url: "postgres:/u:SECRETpw@127.0.0.1/db"\n');
    const { WSMIRROR_MIRROR_URL: _, ...rest } = env('');
    const text = await printed({ ...rest, WSMIRROR_CONFIG: file });
    expect(text).not.toMatch(/SECRET/);
    expect(text).toContain('mirror.url');
  }, 240_000);
});
