import { buildServer, listen, type EmulatorOptions } from '../../src/emulator/index.ts';
import type { Db } from '../../src/emulator/store/database.ts';

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
