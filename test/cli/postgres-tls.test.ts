import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../helpers/embedded-postgres.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * sslmode in the mirror URL means what libpq says it means, against a server of its own with TLS
 * on and a self-signed certificate for `localhost`, where the daemon's role may connect over TLS
 * only (the administrator `postgres` also in plain text, to set it up).
 */
describe('Postgres over TLS: sslmode as libpq reads it (real processes)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-tls-'));
  const certificate = join(dir, 'server.crt');
  const role = 'wsm_tls';
  let server: EmbeddedPostgres;
  let emu: RunningEmulator;
  let port: string;

  beforeAll(async () => {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost',
      '-keyout', join(dir, 'server.key'), '-out', certificate,
    ], { stdio: 'ignore' });
    server = await startEmbeddedPostgres({
      settings: { ssl: 'on', ssl_cert_file: 'server.crt', ssl_key_file: 'server.key' },
      files: {
        'server.crt': readFileSync(certificate, 'utf8'),
        'server.key': readFileSync(join(dir, 'server.key'), 'utf8'),
        'pg_hba.conf': 'hostssl all all 127.0.0.1/32 trust\nhostnossl all postgres 127.0.0.1/32 trust\n',
      },
    });
    port = new URL(server.url).port;
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(`CREATE ROLE "${role}" LOGIN`);
    await admin.query(`CREATE SCHEMA "${role}" AUTHORIZATION "${role}"`);
    await admin.end();
    emu = await startEmulator();
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('crm');
    await ws.createTable('crm', 'deals', { hasHistory: true }, [{ name: 'title', type: 'string', labels: { '': 'Title' } }]);
    await ws.createRecords('crm', 'deals', [{ title: 'a' }]);
  }, 60_000);

  afterAll(async () => {
    await emu?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const env = (query: string, host = '127.0.0.1') => daemonEnv(emu, { url: `postgres://${role}@${host}:${port}/postgres${query}`, pgSchema: role });

  it('sslmode=require encrypts without checking the certificate, and prints no warning', async () => {
    const sync = await runWsmirror(['sync'], env('?sslmode=require'));
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stderr).not.toContain('SECURITY WARNING');
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    try {
      expect((await admin.query(`SELECT "title" FROM "${role}"."crm__deals"`)).rows).toEqual([{ title: 'a' }]);
    } finally {
      await admin.end();
    }
  }, 60_000);

  it.each([
    ['sslmode=prefer', '?sslmode=prefer', '127.0.0.1'],
    ['sslmode=verify-ca, which checks the certificate against sslrootcert but not the host name', `?sslmode=verify-ca&sslrootcert=${certificate}`, '127.0.0.1'],
    ['sslmode=verify-full on the host the certificate names', `?sslmode=verify-full&sslrootcert=${certificate}`, 'localhost'],
    ["node-postgres' own sslmode=no-verify", '?sslmode=no-verify', '127.0.0.1'],
  ])('%s connects', async (_, query, host) => {
    const check = await runWsmirror(['check'], env(query, host));
    expect(check.code, check.stdout + check.stderr).toBe(0);
    expect(check.stderr).not.toContain('SECURITY WARNING');
  }, 60_000);

  it.each([
    ['no sslmode: plain text, which this server refuses the role', '', '127.0.0.1', /no encryption/],
    ['sslmode=verify-full on a host the certificate does not name', `?sslmode=verify-full&sslrootcert=${certificate}`, '127.0.0.1', /does not match certificate/],
    ['sslmode=verify-full without the authority', '?sslmode=verify-full', 'localhost', /self-signed certificate/],
  ])('%s fails', async (_, query, host, reason) => {
    const check = await runWsmirror(['check'], env(query, host));
    expect(check.code, check.stdout + check.stderr).toBe(78);
    expect(check.stdout + check.stderr).toMatch(reason);
  }, 60_000);
});
