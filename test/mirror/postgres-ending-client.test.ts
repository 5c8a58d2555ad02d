import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectionConfig } from '../../src/mirror/postgres/connection-config.ts';
import { ClientEndedWhenConnectFails } from '../../src/mirror/postgres/ending-client.ts';
import { mirrorPool } from '../../src/mirror/postgres/mirror-pool.ts';
import { testPgUrl } from '../helpers/dialects.ts';
import { startPasswordProxy, type PasswordProxy } from '../helpers/password-proxy.ts';

/**
 * A connect that fails on the client's side (no password found: the password function throws)
 * leaves pg's socket open, and the server would hold the session, and the process, until its
 * authentication_timeout. The first test pins that behaviour of pg: should it fail, pg ends the
 * session itself now, and ClientEndedWhenConnectFails may go.
 */
describe('Postgres: a connect that finds no password ends its session', () => {
  let proxy: PasswordProxy;
  const saved = { PGPASSWORD: process.env.PGPASSWORD, PGPASSFILE: process.env.PGPASSFILE };
  const NO_PASSWORD = /no password was found/;

  /** Whether every session the proxy holds is gone within `ms`. */
  const allEnded = async (ms: number) => {
    const until = Date.now() + ms;
    while (proxy.openClients() > 0 && Date.now() < until) await sleep(20);
    return proxy.openClients() === 0;
  };

  beforeAll(async () => {
    proxy = await startPasswordProxy(testPgUrl!);
    delete process.env.PGPASSWORD;
    process.env.PGPASSFILE = '/nonexistent/wsmirror-test-pgpass';
  });
  afterEach(async () => {
    expect(await allEnded(5_000)).toBe(true);
  });
  afterAll(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await proxy?.close();
  });

  it('pg\'s own Client leaves it open (the behaviour ending-client.ts makes up for)', async () => {
    const client = new pg.Client(connectionConfig(proxy.url));
    client.on('error', () => {});
    await expect(client.connect()).rejects.toThrow(NO_PASSWORD);
    expect(await allEnded(1_000)).toBe(false);
    await client.end();
  });

  it('ClientEndedWhenConnectFails ends it at once, as a promise and through a callback', async () => {
    const client = new ClientEndedWhenConnectFails(connectionConfig(proxy.url));
    await expect(client.connect()).rejects.toThrow(NO_PASSWORD);
    expect(await allEnded(1_000)).toBe(true);
    const called = new ClientEndedWhenConnectFails(connectionConfig(proxy.url));
    const error = await new Promise<Error>((resolve) => called.connect((err: Error) => resolve(err)));
    expect(error.message).toMatch(NO_PASSWORD);
    expect(await allEnded(1_000)).toBe(true);
  });

  it('the mirror\'s pool ends it at once', async () => {
    const pool = mirrorPool(proxy.url);
    try {
      await expect(pool.query('SELECT 1')).rejects.toThrow(NO_PASSWORD);
      expect(await allEnded(1_000)).toBe(true);
    } finally {
      await pool.end();
    }
  });
});
