import { createServer, type Server } from 'node:http';
import { afterEach, expect, it } from 'vitest';
import { WorkspaceClient } from '../../src/client/index.ts';
import { recordCursorKey } from '../../src/mirror/catalog.ts';
import { SyncEngine } from '../../src/sync/index.ts';
import { forEachDialect } from '../helpers/dialects.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * DESIGN §4.10: an upstream answer that is not JSON or breaks the schema fails the poll without
 * moving its cursor. A real HTTP proxy in front of the emulator corrupts chosen answers.
 */
type Corruption = (path: string, body: string) => string | undefined;

async function startProxy(target: string, corrupt: { current: Corruption | undefined }): Promise<{ url: string; server: Server }> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const upstream = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers: { authorization: String(req.headers.authorization ?? ''), 'content-type': 'application/json' },
      ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
    });
    const text = await upstream.text();
    const replaced = corrupt.current?.(req.url ?? '', text);
    res.writeHead(upstream.status, { 'content-type': 'application/json' });
    res.end(replaced ?? text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, server };
}

forEachDialect('pull: bad upstream answers', (dialect) => {
  let h: SyncHarness;
  let proxy: Server | undefined;
  afterEach(async () => {
    proxy?.close();
    await h?.close();
  });

  it('fails the table without moving its cursor, then converges once upstream answers well', async () => {
    h = await startSyncHarness(dialect);
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'items', { hasHistory: true }, [{ name: 'qty', type: 'number', labels: { '': 'Qty' } }]);
    const ids = await h.upstream.createRecords('shop', 'items', [{ qty: 1 }, { qty: 2 }]);
    const corrupt: { current: Corruption | undefined } = { current: undefined };
    const started = await startProxy(h.emu.url, corrupt);
    proxy = started.server;
    const client = new WorkspaceClient({ baseUrl: started.url, apiKey: h.emu.apiKey, workspaceId: h.emu.workspaceId, maxRetries: 0 });
    const engine = new SyncEngine({ client, mirror: h.tm.mirror });
    try {
      expect((await engine.runCycle({ forceFullScan: true })).ok).toBe(true);
      const catalog = await h.tm.mirror.readCatalog();
      const cursorKey = recordCursorKey(catalog.tables[0]!.tableId);
      const cursorBefore = await h.tm.mirror.getCursor(cursorKey);
      expect(cursorBefore).toBeDefined();

      await h.upstream.updateRecords('shop', 'items', [{ id: ids[0], qty: 100 }]);
      for (const bad of [
        (path: string) => (path.includes('/records/changes') ? '{"data": [' : undefined),
        (path: string, body: string) => (path.includes('/records?') ? body.replace(/"id":"(\d+)"/g, '"id":$1') : undefined),
      ]) {
        corrupt.current = bad;
        const report = await engine.runCycle();
        expect(report.ok).toBe(false);
        expect(report.tables[0]).toMatchObject({ action: 'failed', error: { code: 'INVALID_RESPONSE' } });
        expect(await h.tm.mirror.getCursor(cursorKey)).toBe(cursorBefore);
      }

      corrupt.current = undefined;
      expect((await engine.runCycle()).ok).toBe(true);
      await h.expectConverged('shop', 'items');
    } finally {
      await client.close();
    }
  });
});
