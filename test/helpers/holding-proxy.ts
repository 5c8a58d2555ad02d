import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP proxy in front of an emulator that forwards every request, and can hold back the
 * answer of a matching one after upstream has applied it: the daemon then sits between
 * "upstream applied the batch" and "the answer arrived", exactly where a crash is the hardest
 * for exactly-once. `onHeld` is where the test kills the daemon (the answer is never sent).
 */
export interface HoldingProxy {
  url: string;
  /** Holds the answer to the next request `matches` accepts; resolves once upstream applied it. */
  holdNext(matches: (method: string, path: string) => boolean): Promise<{ method: string; path: string; status: number }>;
  close(): Promise<void>;
}

export async function startHoldingProxy(target: string): Promise<HoldingProxy> {
  let hold: { matches: (method: string, path: string) => boolean; resolve: (info: { method: string; path: string; status: number }) => void } | undefined;
  const held: ServerResponse[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const method = req.method ?? 'GET';
      const path = req.url ?? '/';
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (typeof v === 'string' && !['host', 'connection', 'content-length', 'transfer-encoding'].includes(k)) headers[k] = v;
      }
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      let answer: Response;
      try {
        answer = await fetch(`${target}${path}`, { method, headers, ...(body ? { body } : {}) });
      } catch {
        res.destroy();
        return;
      }
      const text = Buffer.from(await answer.arrayBuffer());
      const current = hold;
      if (current !== undefined && current.matches(method, path)) {
        hold = undefined;
        held.push(res);
        current.resolve({ method, path, status: answer.status });
        return;
      }
      const out: Record<string, string> = {};
      answer.headers.forEach((v, k) => {
        if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection') out[k] = v;
      });
      res.writeHead(answer.status, out);
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    holdNext(matches) {
      return new Promise((resolve) => {
        hold = { matches, resolve };
      });
    },
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
