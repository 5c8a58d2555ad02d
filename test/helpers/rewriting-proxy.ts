import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type Replacement = string | { status?: number; body?: string; headers?: Record<string, string> } | undefined;

/**
 * Returns the body to send instead of the upstream's, a replacement status, body and/or headers, or
 * undefined to pass the answer through; or a promise of one (the answer waits for it, so a
 * rewrite can change upstream before its client goes on). `path` is the request path with its
 * query string.
 */
export type Rewrite = (path: string, body: string, exchange: { method: string; status: number }) => Replacement | Promise<Replacement>;

/** One request as the proxy saw it. */
export interface SeenRequest {
  method: string;
  /** Path with its query string. */
  path: string;
  body: string;
  /** The status the client got. */
  status: number;
  /** When the request arrived, `performance.now()` of this process. */
  at: number;
}

/**
 * Asked before a request is forwarded: an answer it returns is sent instead, and upstream never
 * sees the request; undefined forwards it, once a returned promise settles (a slow upstream).
 */
export type Intercept = (request: { method: string; path: string; body: string; authorization: string }) => Replacement | Promise<Replacement>;

export interface RewritingProxy {
  url: string;
  /** Applied to every answer while set. */
  rewrite: Rewrite | undefined;
  /** Asked for every request while set, before it is forwarded. */
  intercept: Intercept | undefined;
  /** Every request so far, in the order they arrived: tests read spacing and counts from it. */
  seen: SeenRequest[];
  close(): Promise<void>;
}

/**
 * A real HTTP proxy in front of an emulator that rewrites chosen answers: how tests make an
 * upstream misbehave in ways the emulator never would (a corrupt body, a bogus `meta.asOf`, a
 * name outside the API's rule) while everything else stays the real thing. It also records each
 * request, with the moment it arrived, so a test sees what a client sent and when.
 */
export async function startRewritingProxy(target: string): Promise<RewritingProxy> {
  const proxy: RewritingProxy = { url: '', rewrite: undefined, intercept: undefined, seen: [], close: async () => {} };
  const server: Server = createServer(async (req, res) => {
    const at = performance.now();
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const instead = await proxy.intercept?.({
        method: req.method ?? 'GET', path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8'), authorization: String(req.headers.authorization ?? ''),
      });
      if (instead !== undefined) {
        const answer = typeof instead === 'string' ? { body: instead } : instead;
        const status = answer.status ?? 200;
        proxy.seen.push({ method: req.method ?? 'GET', path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8'), status, at });
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(answer.body ?? '{}');
        return;
      }
      const upstream = await fetch(`${target}${req.url}`, {
        method: req.method,
        headers: {
          authorization: String(req.headers.authorization ?? ''),
          // A content type only with a body: the emulator refuses a JSON content type with none.
          ...(chunks.length > 0 ? { 'content-type': req.headers['content-type'] ?? 'application/json' } : {}),
        },
        ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
      });
      const text = await upstream.text();
      const replaced = await proxy.rewrite?.(req.url ?? '', text, { method: req.method ?? 'GET', status: upstream.status });
      const answer: Exclude<Replacement, string | undefined> = typeof replaced === 'string' ? { body: replaced } : replaced ?? {};
      const status = answer.status ?? upstream.status;
      proxy.seen.push({ method: req.method ?? 'GET', path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8'), status, at });
      const retryAfter = upstream.headers.get('retry-after');
      res.writeHead(status, { 'content-type': 'application/json', ...(retryAfter === null ? {} : { 'retry-after': retryAfter }), ...answer.headers });
      res.end(answer.body ?? text);
    } catch {
      res.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return proxy;
}
