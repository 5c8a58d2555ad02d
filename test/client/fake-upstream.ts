import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A request as the fake upstream received it. */
export interface SeenRequest {
  method: string;
  url: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

/** What the fake upstream does with one request. */
export type Behaviour = (req: IncomingMessage, res: ServerResponse, seen: SeenRequest) => void;

export interface FakeUpstream {
  url: string;
  port: number;
  requests: SeenRequest[];
  /** Most requests being handled at the same time. */
  maxInFlight: number;
  /** TCP connections accepted so far. */
  connections: number;
  close(): Promise<void>;
}

/**
 * A purpose-built upstream on 127.0.0.1 that misbehaves on demand. Given a list, request n gets
 * behaviour n (the last one repeats); given a function, it picks the behaviour per request.
 */
export async function startFakeUpstream(
  handler: Behaviour[] | ((seen: SeenRequest, index: number) => Behaviour),
  port = 0,
): Promise<FakeUpstream> {
  const requests: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  let inFlight = 0;
  const state = { maxInFlight: 0, connections: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const seen: SeenRequest = {
        method: req.method ?? '', url: req.url ?? '', path: url.pathname, query: url.searchParams,
        headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now(),
      };
      const index = requests.length;
      requests.push(seen);
      inFlight++;
      state.maxInFlight = Math.max(state.maxInFlight, inFlight);
      let counted = true;
      const done = () => {
        if (counted) inFlight--;
        counted = false;
      };
      res.on('close', done);
      let behaviour: Behaviour;
      if (Array.isArray(handler)) behaviour = handler[Math.min(index, handler.length - 1)]!;
      else behaviour = handler(seen, index);
      behaviour(req, res, seen);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    state.connections++;
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actualPort = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actualPort}`,
    port: actualPort,
    requests,
    get maxInFlight() {
      return state.maxInFlight;
    },
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

// ---- behaviours --------------------------------------------------------------------------------

export function json(status: number, body: unknown, headers: Record<string, string> = {}, delayMs = 0): Behaviour {
  return (_req, res) => {
    const send = () => {
      if (res.destroyed) return;
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
      res.end(text);
    };
    if (delayMs > 0) setTimeout(send, delayMs);
    else send();
  };
}

export function raw(status: number, text: string, headers: Record<string, string> = {}): Behaviour {
  return (_req, res) => {
    res.writeHead(status, { 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  };
}

export function errorBody(status: number, message: string, headers: Record<string, string> = {}): Behaviour {
  return json(status, { error: { message } }, headers);
}

/** Closes the connection without a response. */
export const drop: Behaviour = (req) => {
  req.socket.destroy();
};

/** Never answers. */
export const hang: Behaviour = () => {};

/** Sends the headers and part of a body, then stalls. */
export const stallMidBody: Behaviour = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
  res.write('{"data":');
};

/** Sends the headers and part of a body, then drops the connection. */
export const dropMidBody: Behaviour = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
  res.write('{"data":', () => req.socket.destroy());
};

/** Streams a chunked body without end (until the client goes away). */
export const endlessBody: Behaviour = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  res.write('{"data":');
  const pump = () => {
    while (!res.destroyed && res.write(chunk)) {
      // keep writing until the socket pushes back
    }
    if (!res.destroyed) res.once('drain', pump);
  };
  pump();
};

export const WORKSPACE_OK = { data: { name: 'Acme', modules: [] } };
export const WORKSPACE_ID = 'abcdef123456';

// ---- records endpoint --------------------------------------------------------------------------

/** What a records list request asks of a table holding `ids` (ascending): the ids it answers with. */
export function listedIds(ids: readonly number[], seen: SeenRequest): { page: number[]; offset: number; limit: number; hasMore: boolean } {
  const offset = Number(seen.query.get('offset') ?? 0);
  const limit = Number(seen.query.get('limit') ?? 100);
  const filter = seen.query.get('filter');
  let rows = ids;
  if (filter) {
    const wanted = new Set((JSON.parse(filter) as { id: number[] }).id);
    rows = ids.filter((id) => wanted.has(id));
  }
  return { page: rows.slice(offset, offset + limit), offset, limit, hasMore: offset + limit < rows.length };
}
