import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawCall, startEmulator, type ApiResponse, type RunningEmulator } from '../helpers/emulator.ts';
import { adminOf, ok } from '../helpers/schema.ts';

/**
 * Who may call a route is decided on the route the router matched, so no spelling of a path
 * (percent-encoding, dot segments, doubled slashes, case, trailing slashes) reaches a route with
 * the credentials of another. Requests go out byte for byte over real HTTP.
 */

const WS = '/api/v1/workspace/test00000001';
const TABLE = `${WS}/modules/crm/tables/people`;
const SEED = {
  modules: [{
    name: 'crm',
    tables: [{
      name: 'people', hasHistory: true,
      fields: [{ name: 'name', type: 'string', labels: {} }, { name: 'note', type: 'string', labels: {} }],
      records: [{ name: 'Ada' }],
    }],
  }],
};

interface Route {
  surface: 'admin' | 'api';
  method: string;
  path: string;
  query?: string;
  body?: unknown;
  status: number;
}

const admin = (method: string, path: string, status: number, body?: unknown): Route =>
  ({ surface: 'admin', method, path: `/_emulator/${path}`, status, ...(body === undefined ? {} : { body }) });
const api = (method: string, path: string, status: number, body?: unknown, query?: string): Route =>
  ({ surface: 'api', method, path, status, ...(body === undefined ? {} : { body }), ...(query ? { query } : {}) });

const ROUTES: Route[] = [
  admin('GET', 'clock', 200),
  admin('PUT', 'clock', 200, { frozen: true }),
  admin('DELETE', 'clock', 200),
  admin('GET', 'faults', 200),
  admin('PUT', 'faults', 200, { errorRate: 1 }),
  admin('DELETE', 'faults', 200),
  admin('POST', 'modules', 201, { name: 'extra' }),
  admin('DELETE', 'modules/crm', 200),
  admin('POST', 'reset', 200),
  admin('POST', 'seed', 201, { modules: [{ name: 'other' }] }),
  api('GET', WS, 200),
  api('GET', `${WS}/schema/changes`, 200, undefined, 'since=2020-01-01T00:00Z'),
  api('GET', `${WS}/modules/crm/tables`, 200),
  api('POST', `${WS}/modules/crm/tables`, 201, { name: 'more' }),
  api('PATCH', TABLE, 200, { isHidden: true }),
  api('DELETE', TABLE, 200),
  api('GET', `${TABLE}/fields`, 200),
  api('POST', `${TABLE}/fields/batch`, 201, [{ name: 'extra', type: 'string', labels: {} }]),
  api('DELETE', `${TABLE}/fields/note`, 200),
  api('GET', `${TABLE}/records`, 200),
  api('POST', `${TABLE}/records`, 201, { records: [{ name: 'Bob' }] }),
  api('DELETE', `${TABLE}/records`, 200, { records: ['1'] }),
  api('GET', `${TABLE}/records/changes`, 200, undefined, 'since=2020-01-01T00:00Z'),
  api('GET', '/openapi.json', 200),
];

const hex = (c: string) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;

/** Other spellings of a path: each may route to the same endpoint, to none, or be refused. */
export function pathVariants(path: string): string[] {
  const segs = path.split('/').slice(1);
  const join = (s: readonly string[]) => `/${s.join('/')}`;
  const out = new Set<string>();
  // Every spelling of the first two and the last two segments (where the route families part).
  const positions = [...new Set([0, 1, segs.length - 2, segs.length - 1].filter((i) => i >= 0 && i < segs.length))];
  for (const i of positions) {
    const s = segs[i]!;
    const at = (replacement: string) => join(segs.with(i, replacement));
    const before = (...inserted: string[]) => join([...segs.slice(0, i), ...inserted, ...segs.slice(i)]);
    out.add(at(hex(s[0]!) + s.slice(1)));
    out.add(at(hex(s[0]!).toLowerCase() + s.slice(1)));
    out.add(at([...s].map(hex).join('')));
    out.add(at(s.slice(0, -1) + hex(s.at(-1)!)));
    out.add(at(s.toUpperCase()));
    out.add(at(s[0]!.toUpperCase() + s.slice(1)));
    out.add(before('.'));
    out.add(before('%2e'));
    out.add(before('x', '..'));
    out.add(before('x', '%2E%2E'));
    out.add(before('x', '.%2e'));
    out.add(before(''));
    out.add(at(`${s};x`));
  }
  out.add(`${path}/`);
  out.add(`${path}//`);
  out.add(`${path}/.`);
  out.add(`${path}/x/..`);
  out.add(`/${path}`);
  out.add(`/${segs.join('%2F')}`);
  out.add(`/${segs.join('%2f')}`);
  out.add(`/${segs.join('\\')}`);
  out.add(`/${segs.join('/./')}`);
  out.add(`/${segs.join('//')}`);
  out.add(`${path}%00`);
  out.add(`${path}#`);
  out.add(`${path}?x=/_emulator/`);
  out.delete(path);
  return [...out];
}

describe('route access is decided on the route the router matched', () => {
  let emu: RunningEmulator;
  const send = (route: Route, path: string, token: string | null) =>
    rawCall(emu.url, route.method, route.query ? `${path}?${route.query}` : path, {
      token,
      ...(route.body === undefined ? {} : { rawBody: JSON.stringify(route.body) }),
    });
  const reseed = async () => {
    ok(await adminOf(emu)('POST', 'reset', SEED), 'reset');
  };
  /** Everything the routes above can change, read through the canonical paths. */
  const state = async () => {
    const read = async (path: string, token: string) => ok(await rawCall(emu.url, 'GET', path, { token })).body;
    return {
      workspace: await read(WS, emu.apiKey),
      schemaChanges: (await read(`${WS}/schema/changes?since=2020-01-01T00:00Z`, emu.apiKey)).data,
      records: await read(`${TABLE}/records`, emu.apiKey),
      clock: (await read('/_emulator/clock', emu.adminToken)).data.frozen,
      faults: await read('/_emulator/faults', emu.adminToken),
    };
  };

  beforeAll(async () => {
    emu = await startEmulator({
      apiKeys: [{ key: 'test-key', grants: 'all' }, { key: 'no-grants', grants: [] }],
    });
    await reseed();
  });
  afterAll(() => emu.close());

  it('the canonical paths answer with the right credential', async () => {
    for (const route of ROUTES) {
      await reseed();
      const res = await send(route, route.path, route.surface === 'admin' ? emu.adminToken : emu.apiKey);
      expect(res.status, `${route.method} ${route.path}: ${JSON.stringify(res.body)}`).toBe(route.status);
    }
    await reseed();
  });

  it.each(ROUTES.map((r) => [`${r.method} ${r.path}`, r] as const))('%s: no spelling lets another credential in', async (_name, route) => {
    const wrong = route.surface === 'admin' ? [null, 'wrong', emu.apiKey, 'no-grants'] : [null, 'wrong', emu.adminToken];
    const right = route.surface === 'admin' ? emu.adminToken : emu.apiKey;
    const variants = pathVariants(route.path);
    const before = await state();
    const refused = new Map<string, ApiResponse[]>();
    for (const path of variants) {
      const answers: ApiResponse[] = [];
      for (const token of wrong) {
        const res = await send(route, path, token);
        expect([401, 404], `${route.method} ${path} with ${token}: ${res.status} ${JSON.stringify(res.body)}`).toContain(res.status);
        expect(res.body).toEqual({ error: { message: expect.any(String) } });
        answers.push(res);
      }
      refused.set(path, answers);
    }
    expect(await state()).toEqual(before);

    // With the right credential a spelling reaches the route (which may refuse a parameter it
    // spells differently: 400) or none (401 or 404, by the surface its path names); where it
    // reaches the route, every other credential was refused with 401.
    for (const path of variants) {
      await reseed();
      const res = await send(route, path, right);
      expect([route.status, 400, 401, 404], `${route.method} ${path}: ${res.status} ${JSON.stringify(res.body)}`).toContain(res.status);
      if (res.status === route.status || res.status === 400) {
        expect(refused.get(path)!.map((r) => r.status), `${route.method} ${path}`).toEqual(wrong.map(() => 401));
      }
    }
    await reseed();
  });

  it('with the admin surface off, no spelling of an admin path answers anything but 401 or 404', async () => {
    const bare = await startEmulator({ adminToken: undefined as unknown as string });
    try {
      for (const route of ROUTES.filter((r) => r.surface === 'admin')) {
        for (const path of [route.path, ...pathVariants(route.path)]) {
          for (const token of [null, 'test-key', 'test-admin']) {
            const res = await rawCall(bare.url, route.method, path, {
              token, ...(route.body === undefined ? {} : { rawBody: JSON.stringify(route.body) }),
            });
            expect([401, 404], `${route.method} ${path} with ${token}: ${res.status}`).toContain(res.status);
          }
        }
      }
    } finally {
      await bare.close();
    }
  });

  it('faults apply to every spelling that reaches an API route', async () => {
    ok(await adminOf(emu)('PUT', 'faults', { errorRate: 1 }));
    try {
      const res = await rawCall(emu.url, 'GET', WS.replace('/api/', '/%61pi/'), { token: emu.apiKey });
      expect(res.status).toBe(500);
      expect(res.body.error.message).toMatch(/injected/);
    } finally {
      ok(await adminOf(emu)('DELETE', 'faults'));
    }
  });
});
