// The daemon's memory under upstream schema churn: `wsmirror run` (through the launcher, as the
// service starts it) on a SQLite mirror, syncing every second, while fields of its tables are
// added, renamed and dropped upstream one after the other, each change followed by an update of
// 120 records. Samples the daemon's RSS every second; at the end it also reads how much of it is
// the C heap ([heap] in /proc/<pid>/smaps, where SQLite's statements live).
//
//   npm run bench -- churn [--seconds=120] [--interval=300] [--tables=4] [--fields=10]
//     [--records=2000] [--records-only]
// `--interval` is the pause in ms after each change; `--records-only` updates records without
// changing fields (the same load without the churn).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { daemonEnv, processMemory, spawnEmulator, stopProcess, WSMIRROR_BIN } from '../test/helpers/processes.ts';
import { field } from '../test/helpers/schema.ts';
import { UpstreamWorkspace } from '../test/helpers/workspace.ts';
import type { BenchOptions } from './run.ts';

const MiB = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;

/** Resident MiB of the process's C heap (the brk heap glibc's main arena grows). */
function cHeapMiB(pid: number): number {
  let kb = 0;
  let inHeap = false;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inHeap = line.endsWith('[heap]');
    else if (inHeap && line.startsWith('Rss:')) kb += Number(line.split(/\s+/)[1]);
  }
  return Math.round((kb / 1024) * 10) / 10;
}

export async function run(options: BenchOptions = {}) {
  const seconds = Number(options['seconds'] ?? 120);
  const interval = Number(options['interval'] ?? 300);
  const tableCount = Number(options['tables'] ?? 4);
  const fieldCount = Number(options['fields'] ?? 10);
  const records = Number(options['records'] ?? 2000);
  const recordsOnly = options['records-only'] === true;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-bench-'));
  const emu = await spawnEmulator();
  try {
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('bench');
    const fields: string[][] = [];
    const ids: string[][] = [];
    for (let t = 0; t < tableCount; t++) {
      fields[t] = Array.from({ length: fieldCount }, (_, i) => `f${i}`);
      await ws.createTable('bench', `t${t}`, { hasHistory: true }, fields[t]!.map((f, i) => field(f, i % 2 ? 'number' : 'string')));
      ids[t] = await ws.createRecords('bench', `t${t}`, Array.from({ length: records }, (_, i) => ({ f0: `r${i}`, f1: i })));
    }
    const env = daemonEnv(emu, { url: `sqlite:${join(dir, 'mirror.db')}` }, { WSMIRROR_SCHEDULE: '1s' });
    const daemon = spawn(WSMIRROR_BIN, ['run'], { env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', ...env }, stdio: 'ignore' });
    const samples: number[] = [];
    const sampler = setInterval(() => {
      const memory = processMemory(daemon.pid!);
      if (memory) samples.push(memory.rssBytes);
    }, 1000);
    try {
      // The first cycles mirror the tables; the churn starts once they are done.
      await new Promise((r) => setTimeout(r, 5000));
      const atStart = samples.at(-1) ?? 0;
      let state = 7;
      const random = (below: number) => {
        state = (state * 1103515245 + 12345) % 2 ** 31;
        return state % below;
      };
      let changes = 0;
      let next = 100;
      const until = Date.now() + seconds * 1000;
      while (Date.now() < until) {
        const t = changes % tableCount;
        const table = `t${t}`;
        const names = fields[t]!;
        // f0 and f1 stay: the record updates write f1.
        const op = random(3);
        if (recordsOnly) {
          // no field changes
        } else if (op === 0 || names.length <= 4) {
          const name = `g${next++}`;
          await ws.addFields('bench', table, [field(name, 'string')]);
          names.push(name);
        } else if (op === 1) {
          const i = 2 + random(names.length - 2);
          const name = `h${next++}`;
          await ws.patchField('bench', table, names[i]!, { name });
          names[i] = name;
        } else {
          const i = 2 + random(names.length - 2);
          await ws.deleteField('bench', table, names[i]!);
          names.splice(i, 1);
        }
        const from = random(records - 120);
        await ws.updateRecords('bench', table, ids[t]!.slice(from, from + 120).map((id, i) => ({ id, f1: i + changes })));
        changes++;
        await new Promise((r) => setTimeout(r, interval));
      }
      const churnEnd = samples.at(-1) ?? 0;
      // Quiet for 20 s: what stays once the churn has stopped.
      await new Promise((r) => setTimeout(r, 20_000));
      const memory = processMemory(daemon.pid!);
      return {
        seconds, interval, tables: tableCount, fields: fieldCount, records, recordsOnly, changes,
        rssMiB: { churnStart: MiB(atStart), churnEnd: MiB(churnEnd), quietEnd: MiB(memory?.rssBytes ?? 0), peak: MiB(memory?.peakRssBytes ?? 0) },
        cHeapMiBAtEnd: cHeapMiB(daemon.pid!),
        rssMiBEvery30s: samples.filter((_, i) => i % 30 === 0).map(MiB),
      };
    } finally {
      clearInterval(sampler);
      await stopProcess(daemon);
    }
  } finally {
    await emu.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
