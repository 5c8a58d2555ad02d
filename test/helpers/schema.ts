import type { FieldCreate } from '../../src/api/index.ts';
import { call, apiOf, type ApiResponse, type EmulatorEndpoint } from './emulator.ts';

/**
 * The pieces every suite builds upstream state with over HTTP: admin calls, paths relative to the
 * workspace, set-up calls that must succeed, and state snapshots. `UpstreamWorkspace`
 * (workspace.ts) is built on these.
 */
export function adminOf(emu: EmulatorEndpoint) {
  return <T = any>(method: string, path: string, body?: unknown, token: string | null = emu.adminToken): Promise<ApiResponse<T>> =>
    call<T>(emu.url, method, `/_emulator/${path}`, { token, ...(body === undefined ? {} : { body }) });
}

export function tablesPath(module: string): string {
  return `modules/${module}/tables`;
}

export function tablePath(module: string, table: string): string {
  return `modules/${module}/tables/${table}`;
}

export function fieldsPath(module: string, table: string): string {
  return `modules/${module}/tables/${table}/fields`;
}

export function recordsPath(module: string, table: string): string {
  return `modules/${module}/tables/${table}/records`;
}

/** Fails loudly when a set-up call does not succeed. */
export function ok<T>(res: ApiResponse<T>, what = 'request'): ApiResponse<T> {
  if (res.status >= 300) throw new Error(`${what} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res;
}

export async function makeModule(emu: EmulatorEndpoint, name: string, props: Record<string, unknown> = {}) {
  return ok(await adminOf(emu)('POST', 'modules', { name, ...props }), `create module ${name}`).body.data;
}

export async function makeTable(
  emu: EmulatorEndpoint, module: string, name: string, props: Record<string, unknown> = {}, fields: unknown[] = [],
) {
  const api = apiOf(emu);
  const table = ok(await api('POST', tablesPath(module), { name, ...props }), `create table ${name}`).body.data;
  if (fields.length > 0) ok(await api('POST', `${fieldsPath(module, name)}/batch`, fields), `create fields of ${name}`);
  return table;
}

/** A minimal valid create-field object. Neither `type` nor `extra` is checked: suites send bad ones too. */
export function field(
  name: string, type: FieldCreate['type'] | (string & {}), extra: Record<string, unknown> = {},
): FieldCreate & Record<string, any> {
  return { name, type, labels: { '': name }, ...extra } as FieldCreate & Record<string, any>;
}

/** Everything a schema client can observe: the workspace and the whole schema change log. */
export async function snapshot(emu: EmulatorEndpoint) {
  const api = apiOf(emu);
  const workspace = ok(await api('GET', '')).body;
  const changes = ok(await api('GET', 'schema/changes?since=1970-01-01T00:00Z')).body.data;
  return { workspace, changes };
}

/** Opens a schema poll and returns its `asOf`: every later change is stamped after it. */
export async function openPoll(emu: EmulatorEndpoint): Promise<string> {
  return ok(await apiOf(emu)('GET', 'schema/changes?since=1970-01-01T00:00Z')).body.meta.asOf;
}

/**
 * Schema changes made after a poll's `asOf`. The next poll starts at that `asOf` inclusively, so
 * it may repeat changes stamped exactly then; those are not "after".
 */
export async function changesAfter(emu: EmulatorEndpoint, asOf: string): Promise<any[]> {
  const data = ok(await apiOf(emu)('GET', `schema/changes?since=${asOf}`)).body.data as { changedAt: string }[];
  return data.filter((c) => c.changedAt > asOf);
}
