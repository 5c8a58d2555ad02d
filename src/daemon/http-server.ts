/**
 * The operations endpoints of `wsmirror run` on plain node:http (three GET routes need no
 * framework): `/healthz` (the process answers), `/readyz` (ReadinessReport, 200 or 503),
 * `/metrics` (Prometheus text).
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../errors.ts';
import type { HttpConfig } from './config-types.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';
import type { ReadinessReport } from './readiness.ts';

export interface HttpServerDeps {
  metrics: Pick<Metrics, 'render' | 'contentType'>;
  readiness: () => ReadinessReport;
  logger?: Pick<Logger, 'warn'>;
  /** Applied to response bodies that may quote upstream errors (the logger's redactor). */
  redact?: (text: string) => string;
}

export interface HttpServer {
  /** `http://HOST:PORT`, with the port actually bound. */
  readonly url: string;
  readonly port: number;
  /** Stops accepting, lets requests in flight end, closes idle keep-alive connections. */
  close(): Promise<void>;
}

/** Listens on `http.port` (0 in a test = any free port). */
export async function listenHttpServer(host: string, port: number, deps: HttpServerDeps): Promise<HttpServer> {
  const server = createServer((req, res) => {
    handle(req, res, deps).catch((error: unknown) => {
      deps.logger?.warn({ err: error }, 'operations endpoint failed');
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
      else res.destroy();
    });
  });
  server.requestTimeout = 10_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    close: () => closeServer(server),
  };
}

/** Starts the server of the configuration, or returns null when `http.port` is 0 (off). */
export async function startHttpServer(http: HttpConfig, deps: HttpServerDeps): Promise<HttpServer | null> {
  if (http.port === 0) return null;
  try {
    return await listenHttpServer(http.host, http.port, deps);
  } catch (error) {
    const problem = bindProblem(http, (error as { code?: unknown }).code);
    if (problem === undefined) throw error;
    throw new ConfigError(`cannot serve /healthz, /readyz and /metrics: ${problem}`, { cause: error });
  }
}

/**
 * A host or port that cannot be bound is a configuration problem (exit 78: restarting cannot
 * fix it): the sentence names the one setting at fault and its value; undefined for other errors.
 */
function bindProblem(http: HttpConfig, code: unknown): string | undefined {
  const setHost = 'set WSMIRROR_HTTP_HOST (http.host) to an address of this machine (127.0.0.1 for this machine only, 0.0.0.0 for every interface)';
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host ${http.host} does not resolve (${code}): ${setHost}`;
    case 'EADDRNOTAVAIL':
      return `the host ${http.host} is not an address of this machine: ${setHost}`;
    case 'EADDRINUSE':
      return `port ${http.port} on ${http.host} is already in use: set WSMIRROR_HTTP_PORT (http.port) to a free port, or to 0 to turn the endpoints off`;
    case 'EACCES':
      return `port ${http.port} on ${http.host} needs privileges this process lacks: set WSMIRROR_HTTP_PORT (http.port) to a port above 1023, or to 0 to turn the endpoints off`;
    default:
      return undefined;
  }
}

async function handle(req: IncomingMessage, res: ServerResponse, deps: HttpServerDeps): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  const routes = ['/healthz', '/readyz', '/metrics'];
  if (!routes.includes(path)) {
    send(res, 404, 'application/json', JSON.stringify({ error: `no such endpoint; try ${routes.join(', ')}` }));
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    send(res, 405, 'application/json', JSON.stringify({ error: 'only GET and HEAD' }));
    return;
  }
  if (path === '/healthz') {
    send(res, 200, 'application/json', JSON.stringify({ status: 'ok' }));
  } else if (path === '/readyz') {
    const report = deps.readiness();
    const body = JSON.stringify(report);
    send(res, report.ready ? 200 : 503, 'application/json', deps.redact ? deps.redact(body) : body);
  } else {
    send(res, 200, deps.metrics.contentType, await deps.metrics.render());
  }
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeIdleConnections();
  });
}
