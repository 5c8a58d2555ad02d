// The Postgres side of the bench scenarios: where they find a server, and how they clean up.
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { processCpuMs } from '../test/helpers/processes.ts';

/** The server the scenarios use: `WSMIRROR_TEST_PG_URL`, else the local one. */
export const BENCH_PG_URL = process.env['WSMIRROR_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Drops a scenario's schema and everything in it: its tables first, 100 to a transaction, since
 * one DROP SCHEMA of a mirror of a thousand tables needs more lock slots than a server has by
 * default (bench/README.md, "memory").
 */
export async function dropSchema(pgUrl: string, schema: string): Promise<void> {
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  try {
    for (;;) {
      const { rows } = await c.query<{ name: string }>('SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 LIMIT 100', [schema]);
      if (rows.length === 0) break;
      await c.query(`DROP TABLE ${rows.map((r) => `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(r.name)}`).join(', ')} CASCADE`);
    }
    await c.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  } finally {
    await c.end();
  }
}

/**
 * CPU time (ms) of each process of the local Postgres server now, by pid; empty when none is seen
 * (a remote server).
 */
export function localPostgresCpu(): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let comm: string;
    try {
      comm = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    if (comm !== 'postgres') continue;
    const ms = processCpuMs(Number(entry));
    if (ms !== undefined) out.set(Number(entry), ms);
  }
  return out;
}

/**
 * The local Postgres server's CPU (ms) between two `localPostgresCpu` readings: the processes
 * alive at the second, from zero for those started since. A process that ended in between is
 * not counted (a connection closed, an autovacuum worker done), so this is a lower bound.
 */
export function postgresCpuBetween(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number | undefined {
  if (after.size === 0) return undefined;
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}
