import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { quoteId, testPgUrl } from './dialects.ts';
import { startEmulator, type RunningEmulator } from './emulator.ts';
import { daemonEnv } from './processes.ts';
import { field } from './schema.ts';
import { UpstreamWorkspace } from './workspace.ts';

/** By default, crm.people holding Ada. */
async function seedPeople(upstream: UpstreamWorkspace): Promise<void> {
  await upstream.createModule('crm');
  await upstream.createTable('crm', 'people', { hasHistory: true }, [field('name', 'string')]);
  await upstream.createRecords('crm', 'people', [{ name: 'Ada' }]);
}

/**
 * Registers, in the enclosing describe, an emulator (its workspace made by `seed`) and an admin
 * connection to the test server; `mirrorOf` makes a new schema's environment for `wsmirror`
 * (`serverOptions` go in the URL's `options`, `-c name=value`). Schemas are dropped afterwards.
 */
export function daemonsOnPostgres(prefix: string, seed: (upstream: UpstreamWorkspace) => Promise<void> = seedPeople) {
  const schemas: string[] = [];
  const fixture = { admin: undefined as unknown as pg.Client, emu: undefined as unknown as RunningEmulator };

  beforeAll(async () => {
    if (!testPgUrl) throw new Error('WSMIRROR_TEST_PG_URL is not set: run the tests with vitest, whose global setup provides a server');
    fixture.admin = new pg.Client({ connectionString: testPgUrl });
    await fixture.admin.connect();
    fixture.emu = await startEmulator();
    await seed(new UpstreamWorkspace(fixture.emu));
  });

  afterAll(async () => {
    await fixture.emu?.close();
    if (fixture.admin) {
      for (const schema of schemas) await fixture.admin.query(`DROP SCHEMA IF EXISTS ${quoteId(schema)} CASCADE`);
      await fixture.admin.end();
    }
  });

  const mirrorOf = (serverOptions?: string) => {
    const schema = `${prefix}_${randomBytes(5).toString('hex')}`;
    schemas.push(schema);
    const url = new URL(testPgUrl!);
    if (serverOptions !== undefined) url.searchParams.set('options', serverOptions);
    return { schema, env: daemonEnv(fixture.emu, { url: url.toString(), pgSchema: schema }, { WSMIRROR_SCHEDULE: '1s', WSMIRROR_LOG_LEVEL: 'info' }) };
  };
  return { fixture, mirrorOf };
}
