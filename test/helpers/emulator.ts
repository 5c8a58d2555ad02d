import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { buildServer, listen, type EmulatorOptions } from '../../src/emulator/index.ts';
import type { Db } from '../../src/emulator/store/db.ts';

/** Where an emulator answers and with which credentials: in this process or a child process. */
export interface EmulatorEndpoint {
  url: string;
  apiKey: string;
  adminToken: string;
  workspaceId: string;
  /** `/api/v1/workspace/{workspaceId}` */
  base: string;
}

export interface RunningEmulator extends EmulatorEndpoint {
  /** The emulator's own SQLite store, for tests that check what it keeps. */
  db: Db;
  close(): Promise<void>;
}

/** `/api/v1/workspace/{workspaceId}` */
export function workspaceBase(workspaceId: string): string {
  return `/api/v1/workspace/${workspaceId}`;
}

/** Starts an emulator on a free port of 127.0.0.1 with one all-grants key and an admin token. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const apiKey = 'test-key';
  const adminToken = 'test-admin';
  const workspaceId = options.workspaceId ?? 'test00000001';
  const app = await buildServer({
    apiKeys: [{ key: apiKey, grants: 'all' }],
    adminToken,
    ...options,
    workspaceId,
  });
  const url = await listen(app, { host: '127.0.0.1', port: 0 });
  return { url, apiKey, adminToken, workspaceId, base: workspaceBase(workspaceId), db: app.emulator.db, close: () => app.close() };
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A bare HTTP call, for conformance tests that check statuses and bodies exactly. */
export async function call<T = any>(
  url: string,
  method: string,
  path: string,
  options: { token?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  const res = await fetch(`${url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // leave as text
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}

/** `call` bound to one emulator and its all-grants key. */
export function apiOf(emu: EmulatorEndpoint) {
  return <T = any>(method: string, path: string, body?: unknown, token: string | null = emu.apiKey) =>
    call<T>(emu.url, method, path.startsWith('/') ? path : `${emu.base}/${path}`, {
      token,
      ...(body === undefined ? {} : { body }),
    });
}

/**
 * One request with its path sent byte for byte (fetch would resolve `.`/`..` segments and
 * re-encode), for tests of how the emulator reads unusual paths. Connection errors reject.
 */
export function rawCall<T = any>(
  url: string,
  method: string,
  path: string,
  options: { token?: string | null; rawBody?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const { hostname, port } = new URL(url);
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.rawBody !== undefined) {
    headers['content-type'] ??= 'application/json';
    headers['content-length'] ??= String(Buffer.byteLength(options.rawBody));
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = text === '' ? undefined : JSON.parse(text);
        } catch {
          // leave as text
        }
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
        resolve({ status: res.statusCode ?? 0, headers: h, body: body as T });
      });
    });
    req.on('error', reject);
    req.end(options.rawBody);
  });
}

/**
 * Sends bytes as they are on a fresh connection (a request fetch or node:http would not write:
 * chunked framing by hand, a body announced and never sent) and returns status and parsed body
 * of the answer, read until the emulator closes the connection.
 */
export function rawHttp(url: string, bytes: string | Buffer): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const rest = text.slice(text.indexOf('\r\n\r\n') + 4);
      let body: unknown = rest;
      try {
        body = JSON.parse(rest);
      } catch {
        // leave as text
      }
      resolve({ status, body });
    });
    socket.end(bytes);
  });
}
