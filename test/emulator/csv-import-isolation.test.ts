import { afterAll, beforeAll, expect, it } from 'vitest';
import { postCsv } from '../helpers/csv-upload.ts';
import { apiOf, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { field, recordsPath } from '../helpers/schema.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * The import reads its file while its transaction is open. Requests that arrive meanwhile are
 * answered after it, so none of them sees rows the import later rolls back (or runs inside its
 * transaction).
 */

let emu: RunningEmulator;
let api: ReturnType<typeof apiOf>;
const ROWS = 30_000;

beforeAll(async () => {
  emu = await startEmulator();
  api = apiOf(emu);
  const ws = new UpstreamWorkspace(emu);
  await ws.createModule('iso');
  await ws.createTable('iso', 'items', {}, [field('name', 'string'), field('qty', 'number')]);
});
afterAll(() => emu.close());

it('answers other requests after a failing import, never with its uncommitted rows', async () => {
  const lines = ['name,qty'];
  for (let i = 0; i < ROWS; i++) lines.push(`n${i},${i}`);
  lines.push('last,not a number');
  const importing = postCsv(emu, 'iso', 'items', `${lines.join('\n')}\n`, { batchSize: '500' });
  let done = false;
  void importing.finally(() => {
    done = true;
  });
  const seen: number[] = [];
  while (!done) {
    const res = await api('GET', `${recordsPath('iso', 'items')}?limit=1`);
    expect(res.status).toBe(200);
    seen.push(res.body.data.length);
  }
  const res = await importing;
  expect(res.status).toBe(400);
  expect(res.body.error.message).toContain(`line ${ROWS + 2}, column 2 ("qty")`);
  expect(seen.length).toBeGreaterThan(0);
  expect(seen.filter((n) => n > 0)).toEqual([]);
  expect((await api('GET', `${recordsPath('iso', 'items')}?limit=1`)).body.data).toEqual([]);
}, 60_000);

it('runs imports that arrive together one after the other, each whole', async () => {
  const file = (from: number) => ['name,qty', ...Array.from({ length: 5_000 }, (_, i) => `m${from + i},${i}`)].join('\n') + '\n';
  const before = (await api('GET', `${recordsPath('iso', 'items')}?limit=1`)).body.data.length;
  expect(before).toBe(0);
  const results = await Promise.all([0, 10_000, 20_000].map((from) => postCsv(emu, 'iso', 'items', file(from), { batchSize: '500' })));
  for (const res of results) expect(res.status, JSON.stringify(res.body)).toBe(200);
  let count = 0;
  for (let offset = 0; ; offset += 100) {
    const page = await api('GET', `${recordsPath('iso', 'items')}?limit=100&offset=${offset}`);
    count += page.body.data.length;
    if (!page.body.page_info.has_more) break;
  }
  expect(count).toBe(15_000);
}, 60_000);
