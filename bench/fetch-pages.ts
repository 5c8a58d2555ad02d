// A process that only fetches one table's pages, as a backfill reads them (id order, 100 per
// page, `concurrency` in flight), and discards them. `bench/pull.ts` times a whole `wsmirror
// sync` process against a whole process of this, started with the same Node options.
// Environment: WSMIRROR_BASE_URL, WSMIRROR_API_KEY, WSMIRROR_WORKSPACE_ID, BENCH_MODULE,
// BENCH_TABLE, BENCH_CONCURRENCY. Prints `{ rows, cpuMs, maxRssKiB }` as JSON.
import module from 'node:module';

// Kept compiled between runs, as `bin/wsmirror` keeps the daemon's modules (the client's
// sources would otherwise be type-stripped at every start).
module.enableCompileCache?.();
const { WorkspaceClient } = await import('../src/client/index.ts');

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const client = new WorkspaceClient({ baseUrl: env('WSMIRROR_BASE_URL'), apiKey: env('WSMIRROR_API_KEY'), workspaceId: env('WSMIRROR_WORKSPACE_ID') });
let rows = 0;
const pages = client.iterateRecords(env('BENCH_MODULE'), env('BENCH_TABLE'), { pageSize: 100, concurrency: Number(env('BENCH_CONCURRENCY')) });
for await (const page of pages) rows += page.length;
await client.close();
const cpu = process.cpuUsage();
process.stdout.write(`${JSON.stringify({ rows, cpuMs: Math.round((cpu.user + cpu.system) / 1000), maxRssKiB: process.resourceUsage().maxRSS })}\n`);
