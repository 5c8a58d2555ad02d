import { randomBytes } from 'node:crypto';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';

/**
 * A TCP proxy in front of a Postgres server that counts the round trips its clients make: each
 * simple query (`Q`) and each extended-protocol `Sync` (`S`, which ends a parse/bind/execute
 * exchange) waits for the server's answer before the client goes on. Against a server across a
 * network each of them costs a network round trip. On `port` when given (a server that comes up
 * where a client already tries to reach it), else on any free port.
 */
export interface RoundTripCounter {
  /** `url` with the proxy's host and port. */
  url: string;
  /** Round trips since the start or the last `reset`. */
  readonly roundTrips: number;
  reset(): void;
  close(): Promise<void>;
}

export async function startRoundTripCounter(url: string, options: { port?: number } = {}): Promise<RoundTripCounter> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  let roundTrips = 0;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let pending = Buffer.alloc(0);
    let started = false;
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        // The first message (startup, or an SSL or cancel request) has no type byte.
        const header = started ? 5 : 4;
        if (pending.length < header) break;
        const length = started ? pending.readInt32BE(1) + 1 : pending.readInt32BE(0);
        if (pending.length < length) break;
        if (started && (pending[0] === 0x51 || pending[0] === 0x53)) roundTrips += 1;
        // An SSL request is answered by one byte and followed by the real startup message.
        if (started || length !== 8) started = true;
        pending = pending.subarray(length);
      }
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as AddressInfo).port);
  return {
    url: proxied.toString(),
    get roundTrips() {
      return roundTrips;
    },
    reset() {
      roundTrips = 0;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The test server (WSMIRROR_TEST_PG_URL) behind a round-trip counter for one suite, with the
 * schemas it hands out dropped after the suite (registers the suite's beforeAll and afterAll).
 */
export function countedPostgres(): { readonly counter: RoundTripCounter; newSchema(prefix: string): string } {
  const url = process.env['WSMIRROR_TEST_PG_URL']!;
  const schemas: string[] = [];
  let counter: RoundTripCounter | undefined;
  beforeAll(async () => {
    counter = await startRoundTripCounter(url);
  });
  afterAll(async () => {
    await counter?.close();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      for (const schema of schemas) await c.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
    } finally {
      await c.end();
    }
  });
  return {
    get counter() {
      if (counter === undefined) throw new Error('countedPostgres: the counter starts in beforeAll');
      return counter;
    },
    newSchema(prefix: string) {
      const schema = `${prefix}_${randomBytes(4).toString('hex')}`;
      schemas.push(schema);
      return schema;
    },
  };
}
