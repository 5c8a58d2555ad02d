import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { WorkspaceClient } from '../../src/client/index.ts';
import { openMirror } from '../../src/mirror/open-mirror.ts';
import type { TableFilter } from '../../src/mirror/table-filter.ts';
import { SyncEngine } from '../../src/sync/index.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { startRoundTripCounter, type RoundTripCounter } from '../helpers/pg-round-trips.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * A daemon polls every few seconds, against a Postgres server that may be across a network. An
 * idle cycle costs each table with history one round trip to the server: one simple query that
 * stores its new cursor and records its pull (last pull, upstream state held, error cleared) as
 * one transaction. Its cursor comes from one read of every cursor per cycle.
 */

const PG_URL = process.env['WSMIRROR_TEST_PG_URL']!;
let emu: RunningEmulator;
let counter: RoundTripCounter;
const schemas: string[] = [];

beforeAll(async () => {
  emu = await startEmulator();
  const ws = new UpstreamWorkspace(emu);
  await ws.createModule('crm');
  for (let i = 0; i < 6; i++) {
    await ws.createTable('crm', `t${i}`, { hasHistory: true }, [{ name: 'title', type: 'string', labels: { '': 'Title' } }]);
    await ws.createRecords('crm', `t${i}`, [{ title: 'a' }, { title: 'b' }]);
  }
  counter = await startRoundTripCounter(PG_URL);
});

afterAll(async () => {
  await counter?.close();
  await emu?.close();
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  for (const schema of schemas) await c.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  await c.end();
});

/** Round trips of an idle cycle (after a first one) of a mirror of the tables `tables` selects. */
async function idleCycleRoundTrips(tables: TableFilter): Promise<number> {
  const schema = `wsm_idle_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  const mirror = await openMirror(counter.url, { pgSchema: schema });
  const client = new WorkspaceClient({ baseUrl: emu.url, apiKey: emu.apiKey, workspaceId: emu.workspaceId });
  try {
    const engine = new SyncEngine({ client, mirror, options: { lookbackMs: 0, tables } });
    expect((await engine.runCycle({ forceFullScan: true })).ok).toBe(true);
    counter.reset();
    const idle = await engine.runCycle({});
    expect(idle.ok).toBe(true);
    expect(idle.tables.every((t) => t.action === 'changes' && t.upserted === 0)).toBe(true);
    return counter.roundTrips;
  } finally {
    await client.close();
    await mirror.close();
  }
}

it('an idle cycle costs each table with history one round trip to Postgres, and the cycle itself seven', async () => {
  const two = await idleCycleRoundTrips({ include: ['crm.t0', 'crm.t1'] });
  const six = await idleCycleRoundTrips({});
  // Four tables more: each stores its cursor and records its pull in one simple query.
  expect(six - two).toBe(4);
  // The catalog, read once (4: its revision, tables, fields and the schema's other names); the
  // outbox's due entries (1); every cursor, read once (1); the cycle recorded with the schema
  // cursor (1). It used to cost 22 plus 7 per table: the catalog and the cursors were read again
  // after a schema pull that changed nothing, the schema pull read its three cursors one by one
  // and stored the new one in a transaction of its own, the cycle record deleted and inserted
  // each of its values, and each table read its cursor and wrote it and its pull in two
  // transactions (each a round trip for BEGIN, one per statement and one for COMMIT).
  expect(two - 2).toBe(7);
});
