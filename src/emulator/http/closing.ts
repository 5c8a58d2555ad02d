import type { FastifyInstance } from 'fastify';

/**
 * How the emulator stops: no new connection, every request already received is answered, and
 * then it is gone, though its clients keep connections alive (a daemon's client keeps them for
 * minutes). Fastify closes the idle ones at once; a connection answering a request when the stop
 * came is told `Connection: close` with its answer, so it closes as soon as that is sent instead
 * of waiting for the server's keep-alive timeout.
 */
export function registerClosingConnections(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
}

/**
 * Closes the server, giving the requests in flight `graceMs` to be answered; connections still
 * open then (a handler that does not finish, a client that never reads its answer) are cut.
 */
export async function closeWithin(app: FastifyInstance, graceMs: number): Promise<void> {
  const cut = setTimeout(() => app.server.closeAllConnections(), graceMs);
  try {
    await app.close();
  } finally {
    clearTimeout(cut);
  }
}
