// Function fields on reads: two tables with the same records, one with three function fields more
// (arithmetic, an if over text, a text join). Pages of 100 records are listed from both in
// alternation; the figure is the ratio of the medians, taken in one run.
import { spawnEmulator } from '../test/helpers/processes.ts';
import { field, recordsPath } from '../test/helpers/schema.ts';
import { UpstreamWorkspace } from '../test/helpers/workspace.ts';
import { rawApi } from './raw-api.ts';
import type { BenchOptions } from './run.ts';
import { median, round } from './stats.ts';

const TARGET_RATIO = 2;

export async function run(options: BenchOptions = {}) {
  const total = Number(options.records ?? 10_000);
  const samples = Number(options.samples ?? 200);
  const emu = await spawnEmulator({ stderr: 'inherit' });
  const api = rawApi(emu);
  try {
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('bench');
    const stored = [field('name', 'string'), field('qty', 'number'), field('price', 'number'), field('active', 'boolean')];
    await ws.createTable('bench', 'plain', {}, stored);
    await ws.createTable('bench', 'computed', {}, [
      ...stored,
      field('total', 'function', { expression: 'round(qty * price * 1.2, 2)' }),
      field('size', 'function', { expression: 'if qty > 500 then "large" else if qty > 100 then "medium" else "small" end end' }),
      field('title', 'function', { expression: 'upper(name) + " (" + text(qty) + ")"' }),
    ]);
    for (const table of ['plain', 'computed']) {
      const path = `${emu.base}/${recordsPath('bench', table)}`;
      for (let from = 0; from < total; from += 1000) {
        const rows = [];
        for (let i = from; i < Math.min(total, from + 1000); i++) rows.push({ name: `item ${i}`, qty: i % 997, price: (i % 89) + 0.5, active: i % 2 === 0 });
        await api('POST', path, JSON.stringify({ records: rows }));
      }
    }
    const times: Record<'plain' | 'computed', number[]> = { plain: [], computed: [] };
    const page = (table: 'plain' | 'computed', i: number) =>
      `${emu.base}/${recordsPath('bench', table)}?limit=100&offset=${(i * 100) % Math.max(1, total - 100)}`;
    for (let i = 0; i < samples + 5; i++) {
      for (const table of ['plain', 'computed'] as const) {
        const t0 = performance.now();
        const body = await api('GET', page(table, i));
        const ms = performance.now() - t0;
        if (body.data.length !== 100) throw new Error(`${table}: a page held ${body.data.length} records`);
        if (table === 'computed' && typeof body.data[0].values.total !== 'number') throw new Error('total was not computed');
        if (i >= 5) times[table].push(ms);
      }
    }
    const plainMs = round(median(times.plain));
    const computedMs = round(median(times.computed));
    const ratio = round(computedMs / plainMs);
    return { records: total, samples, plainPageMs: plainMs, computedPageMs: computedMs, ratio, target: TARGET_RATIO, met: ratio <= TARGET_RATIO };
  } finally {
    await emu.stop();
  }
}
