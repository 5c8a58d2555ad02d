import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { freePort } from '../helpers/free-port.ts';
import { runWsmirror } from '../helpers/processes.ts';

/**
 * Credentials in upstream.baseUrl (a user, a password, a token as the user) never show in what
 * commands print or log, in any encoding: the base URL is shown rebuilt from its parts, as the
 * mirror URL is. Real processes: an upstream that answers (check prints the URL), one nothing
 * listens on (the message quotes the URL), a value the configuration refuses, and the logs of
 * `run` at debug level (the configuration, the start).
 */
describe('credentials in upstream.baseUrl in what commands print (real processes)', () => {
  let port: number;
  let emu: RunningEmulator;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-base-url-secrets-'));
  beforeAll(async () => {
    port = await freePort();
    emu = await startEmulator();
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const env = (baseUrl: string, extra: Record<string, string> = {}) => ({
    WSMIRROR_MIRROR_URL: `sqlite:${join(dir, `m-${Math.random().toString(36).slice(2)}.db`)}`,
    WSMIRROR_BASE_URL: baseUrl,
    WSMIRROR_API_KEY: emu.apiKey,
    WSMIRROR_WORKSPACE_ID: emu.workspaceId,
    WSMIRROR_LOG_LEVEL: 'debug',
    WSMIRROR_HTTP_PORT: '0',
    ...extra,
  });
  /** Everything these commands print. */
  const printed = async (vars: Record<string, string>, commands: string[][]) => {
    const out: string[] = [];
    for (const args of commands) {
      const res = await runWsmirror(args, vars, { killAfterMs: args[0] === 'run' ? 4_000 : 60_000 });
      out.push(res.stdout, res.stderr);
    }
    return out.join('\n');
  };
  /** The lines that show any of the credentials, decoded or not. */
  const leaks = (text: string) => text.split('\n').filter((line) => /us3rname|s3cr|t0ken/i.test(line)).join('\n');

  it('an upstream that answers: check shows the URL without them; run logs it without them', async () => {
    const host = new URL(emu.url).host;
    for (const url of [`http://us3rname:s3cr%40t@${host}/`, `http://us3rname:s3cr@t@${host}`, `http://t0kenABC@${host}/`]) {
      const text = await printed(env(url), [['check'], ['check', '--json'], ['run']]);
      expect(leaks(text), url).toBe('');
      expect(text, url).toContain(`upstream: http://[Redacted]@${host}, workspace ${emu.workspaceId} (the key is accepted)`);
    }
  }, 120_000);

  it('an upstream nothing listens on: the messages that quote the URL show it without them', async () => {
    for (const url of [`http://us3rname:s3cr%40t@127.0.0.1:${port}/base`, `http://t0kenABC@127.0.0.1:${port}`]) {
      const text = await printed(env(url, { WSMIRROR_UPSTREAM_RETRIES: '0' }), [['sync'], ['check'], ['check', '--json']]);
      expect(leaks(text), url).toBe('');
      expect(text, url).toContain(`http://[Redacted]@127.0.0.1:${port}`);
    }
  }, 120_000);

  it('a base URL the configuration refuses is shown without them', async () => {
    for (const url of [`http://us3rname:s3cr%40t@127.0.0.1:${port}/?x=1`, `http://t0kenABC@127.0.0.1:${port}/api/v1`, `ftp://us3rname:s3cr@t@127.0.0.1/`]) {
      const res = await runWsmirror(['check'], env(url));
      expect(res.code, res.stderr).toBe(78);
      expect(leaks(res.stdout + res.stderr), url).toBe('');
      expect(res.stdout + res.stderr, url).toContain('WSMIRROR_BASE_URL: "');
    }
  }, 60_000);

  it('a base URL without a scheme is shown as given when it holds no credentials, with what to add', async () => {
    for (const url of ['127.0.0.1:8787', 'localhost:8787']) {
      const res = await runWsmirror(['check'], env(url));
      expect(res.code, res.stderr).toBe(78);
      expect(res.stderr, url).toContain(`WSMIRROR_BASE_URL: "${url}" is not an http:// or https:// URL`);
      expect(res.stderr, url).toContain(`add http:// or https:// in front (http://${url})`);
    }
    const withUser = await runWsmirror(['check'], env('us3rname:s3cr@127.0.0.1:8787'));
    expect(withUser.code).toBe(78);
    expect(leaks(withUser.stdout + withUser.stderr)).toBe('');
    expect(withUser.stderr).toContain('add http:// or https:// in front');
  }, 60_000);

  it('a refused base URL with a query shows none of its values, whatever they are named', async () => {
    for (const url of ['127.0.0.1:8787?api_key=S3CRETVALUE1', 'http://127.0.0.1:8787/?token=S3CRETVALUE2', 'https://h.example.com/x?access_token=S3CRETVALUE3#frag']) {
      const res = await runWsmirror(['check'], env(url));
      expect(res.code, res.stderr).toBe(78);
      expect(res.stdout + res.stderr, url).not.toContain('S3CRETVALUE');
      expect(res.stderr, url).toContain('?[Redacted]');
    }
  }, 60_000);

  it('a scheme written wrong is answered with the URL it most likely meant, the host shown', async () => {
    const cases: [string, string][] = [
      ['https:/db.example.com', 'https://db.example.com'],
      ['http//127.0.0.1:8787', 'http://127.0.0.1:8787'],
      ['//127.0.0.1:8787', 'http://127.0.0.1:8787'],
      ['https:db.example.com', 'https://db.example.com'],
    ];
    for (const [url, meant] of cases) {
      const res = await runWsmirror(['check'], env(url));
      expect(res.code, res.stderr).toBe(78);
      expect(res.stderr, url).toContain(`(${meant})`);
      expect(res.stderr, url).not.toMatch(/http:\/\/https?:|http:\/\/http|http:\/\/\/\//);
    }
  }, 60_000);
});
