import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { WorkspaceClient } from '../../src/client/index.ts';
import { openMirror } from '../../src/mirror/open-mirror.ts';
import type { TableFilter } from '../../src/mirror/table-filter.ts';
import { SYNC_DEFAULTS, SyncEngine, type SyncObserver } from '../../src/sync/index.ts';
import { pushOutbox } from '../../src/sync/push/push-step.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { countedPostgres } from '../helpers/pg-round-trips.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * A daemon polls every few seconds, against a Postgres server that may be across a network. An
 * idle cycle costs each table with history one round trip to the server: one simple query that
 * stores its new cursor and records its pull (last pull, upstream state held, error cleared) as
 * one transaction. Its cursor comes from one read of every cursor per cycle.
 *
 * Rows inserted locally become records upstream, and each created record's id then replaces the
 * row's temporary one in the mirror: in its row, in references to it, in the outbox. Against a
 * Postgres server across a network every statement costs a round trip, so those writes (and the
 * marks made before the creates go out) go together: a push costs the same number of round trips
 * for 5 local inserts as for 40. It used to cost eleven more per insert.
 */

const PG_URL = process.env['WSMIRROR_TEST_PG_URL']!;
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const counted = countedPostgres();
let emu: RunningEmulator;

beforeAll(async () => {
  emu = await startEmulator();
  const ws = new UpstreamWorkspace(emu);
  await ws.createModule('crm');
  for (let i = 0; i < 6; i++) {
    await ws.createTable('crm', `t${i}`, { hasHistory: true }, [{ name: 'title', type: 'string', labels: { '': 'Title' } }]);
    await ws.createRecords('crm', `t${i}`, [{ title: 'a' }, { title: 'b' }]);
  }
  await ws.createTable('crm', 'people', { hasHistory: true }, [{ name: 'name', type: 'string', labels: { '': 'Name' } }]);
  await ws.createTable('crm', 'deals', { hasHistory: true }, [
    { name: 'title', type: 'string', labels: { '': 'Title' } },
    { name: 'owner', type: 'reference', labels: { '': 'Owner' }, refTableName: 'people' },
  ]);
});

afterAll(async () => {
  await emu?.close();
});

/**
 * Round trips of a cycle (after a first one) of a mirror of the tables `tables` selects; with
 * `change`, after a record of `crm.t0` changed upstream.
 */
async function cycleRoundTrips(tables: TableFilter, change?: string, observer?: SyncObserver): Promise<number> {
  const mirror = await openMirror(counted.counter.url, { pgSchema: counted.newSchema('wsm_cycle') });
  const client = new WorkspaceClient({ baseUrl: emu.url, apiKey: emu.apiKey, workspaceId: emu.workspaceId });
  try {
    const engine = new SyncEngine({ client, mirror, options: { lookbackMs: 0, tables }, ...(observer ? { observer } : {}) });
    expect((await engine.runCycle({ forceFullScan: true })).ok).toBe(true);
    if (change !== undefined) {
      const [first] = await new UpstreamWorkspace(emu).allRecords('crm', 't0');
      await new UpstreamWorkspace(emu).updateRecords('crm', 't0', [{ id: first!.id, title: change }]);
    }
    counted.counter.reset();
    const cycle = await engine.runCycle({});
    expect(cycle.ok).toBe(true);
    expect(cycle.tables.map((t) => t.upserted)).toEqual(cycle.tables.map((t) => (change !== undefined && t.table === 'crm.t0' ? 1 : 0)));
    return counted.counter.roundTrips;
  } finally {
    await client.close();
    await mirror.close();
  }
}

it('an idle cycle costs each table with history one round trip to Postgres, and the cycle itself four', async () => {
  const two = await cycleRoundTrips({ include: ['crm.t0', 'crm.t1'] });
  const six = await cycleRoundTrips({ include: ['crm.t*'] });
  // Four tables more: each stores its cursor and records its pull in one simple query.
  expect(six - two).toBe(4);
  // The catalog, read once (1: its revision, tables, fields and the schema's other names in one
  // simple query); the outbox's due entries (1); every cursor, read once (1); the cycle
  // recorded with the schema cursor (1). It used to cost 22 plus 7 per table: the catalog (4
  // statements) and the cursors were read again after a schema pull that changed nothing, the
  // schema pull read its three cursors one by one and stored the new one in a transaction of
  // its own, the cycle record deleted and inserted each of its values, and each table read its
  // cursor and wrote it and its pull in two transactions (each a round trip for BEGIN, one per
  // statement and one for COMMIT).
  expect(two - 2).toBe(4);
});

it('the daemon\'s account of each table\'s last pull (the lag metric) costs no round trip: the catalog holds it', async () => {
  const tables = { include: ['crm.t0', 'crm.t1'] };
  // What the observer was told last: at the measured cycle, after a first that pulled each table.
  let seen: (Date | null)[] = [];
  const observed = await cycleRoundTrips(tables, undefined, { tablesMirrored: (mirrored) => { seen = mirrored.map((t) => t.currentAsOf); } });
  expect(seen).toHaveLength(2);
  expect(seen.every((at) => at instanceof Date)).toBe(true);
  expect(observed).toBe(await cycleRoundTrips(tables));
});

it('a table with a changed record costs seven round trips to Postgres: its cursor and state go with COMMIT', async () => {
  const idle = await cycleRoundTrips({ include: ['crm.t0', 'crm.t1'] });
  const changed = await cycleRoundTrips({ include: ['crm.t0', 'crm.t1'] }, 'changed');
  // BEGIN; whether the table has local edits; its highest id; the stage for rows it holds
  // already; the COPY into it; the upsert from it; cursor, state and COMMIT, where the cursor
  // and the state each cost a round trip of their own before. Idle, the table costs one.
  expect(changed - idle).toBe(7 - 1);
});

/** Round trips of a push of `count` rows inserted locally into `people`. */
async function pushRoundTrips(count: number): Promise<number> {
  const schema = counted.newSchema('wsm_pushtrips');
  const mirror = await openMirror(counted.counter.url, { pgSchema: schema });
  const client = new WorkspaceClient({ baseUrl: emu.url, apiKey: emu.apiKey, workspaceId: emu.workspaceId });
  try {
    await new SyncEngine({ client, mirror, options: { lookbackMs: 0 } }).runCycle({ forceFullScan: true });
    const people = (await mirror.readCatalog()).tables.find((t) => t.tableName === 'people')!.sqlName;
    const local = new pg.Client({ connectionString: PG_URL });
    await local.connect();
    try {
      await local.query(`INSERT INTO ${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(people)} (name) SELECT 'new ' || g FROM generate_series(1, ${count}) g`);
    } finally {
      await local.end();
    }
    counted.counter.reset();
    const report = await pushOutbox({ client, mirror, options: { ...SYNC_DEFAULTS, lookbackMs: 0 }, logger: silent });
    expect(report).toMatchObject({ pushed: count, failed: 0 });
    const trips = counted.counter.roundTrips;
    const ids = new pg.Client({ connectionString: PG_URL });
    await ids.connect();
    try {
      const { rows } = await ids.query<{ id: string }>(`SELECT id FROM ${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(people)} WHERE id < 0`);
      expect(rows).toEqual([]);
    } finally {
      await ids.end();
    }
    return trips;
  } finally {
    await client.close();
    await mirror.close();
  }
}

it('a push of rows inserted locally costs as many round trips to Postgres for 40 rows as for 5', async () => {
  const five = await pushRoundTrips(5);
  const forty = await pushRoundTrips(40);
  expect(forty - five).toBe(0);
});
