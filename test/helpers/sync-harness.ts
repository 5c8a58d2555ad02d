import { expect } from 'vitest';
import { WorkspaceClient, type RequestInfo } from '../../src/client/index.ts';
import { SyncEngine, type SyncOptions } from '../../src/sync/index.ts';
import type { DialectContext, TestMirror } from './dialects.ts';
import { startEmulator, type RunningEmulator } from './emulator.ts';
import { mirrorRows, upstreamRows } from './mirror-snapshot.ts';
import { startRewritingProxy, type RewritingProxy } from './rewriting-proxy.ts';
import { UpstreamWorkspace } from './workspace.ts';

export interface SyncHarness {
  emu: RunningEmulator;
  upstream: UpstreamWorkspace;
  tm: TestMirror;
  /** With `{ proxy: true }`: the rewriting proxy the client talks through. */
  proxy: RewritingProxy | undefined;
  client: WorkspaceClient;
  engine: SyncEngine;
  /** Every request the client made, in order. */
  requests: RequestInfo[];
  /** One cycle; fails the test if a table failed unless `allowFailure`. */
  sync(opts?: { allowFailure?: boolean }): ReturnType<SyncEngine['runCycle']>;
  /** Asserts the mirror (`tm`, or another one) holds exactly upstream's rows and values for the table. */
  expectConverged(moduleName: string, tableName: string, mirror?: TestMirror): Promise<void>;
  close(): Promise<void>;
}

export async function startSyncHarness(
  dialect: DialectContext,
  options: Partial<SyncOptions> = {},
  clientOptions: { maxRetries?: number; proxy?: boolean } = {},
): Promise<SyncHarness> {
  const emu = await startEmulator();
  const tm = await dialect.fresh();
  const proxy = clientOptions.proxy ? await startRewritingProxy(emu.url) : undefined;
  const requests: RequestInfo[] = [];
  const client = new WorkspaceClient({
    baseUrl: proxy?.url ?? emu.url,
    apiKey: emu.apiKey,
    workspaceId: emu.workspaceId,
    retryBaseMs: 2,
    retryMaxMs: 50,
    maxRetries: clientOptions.maxRetries ?? 12,
    onRequest: (info) => requests.push(info),
  });
  const engine = new SyncEngine({ client, mirror: tm.mirror, options });
  const upstream = new UpstreamWorkspace(emu);
  return {
    emu, upstream, tm, proxy, client, engine, requests,
    async sync(opts = {}) {
      const report = await engine.runCycle({ forceFullScan: true });
      if (!opts.allowFailure) expect(report.tables.filter((t) => t.action === 'failed')).toEqual([]);
      return report;
    },
    async expectConverged(moduleName, tableName, mirror = tm) {
      const table = await upstream.getTable(moduleName, tableName);
      const types: Record<string, string> = Object.fromEntries(
        (table.fields as { name: string; type: string }[]).map((f) => [f.name, f.type]),
      );
      const expected = upstreamRows(await upstream.allRecords(moduleName, tableName), types);
      const actual = await mirrorRows(mirror, moduleName, tableName);
      expect([...actual.keys()]).toEqual([...expected.keys()]);
      expect(Object.fromEntries(actual)).toEqual(Object.fromEntries(expected));
    },
    async close() {
      await client.close();
      await proxy?.close();
      await emu.close();
    },
  };
}
