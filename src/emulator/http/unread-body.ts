import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * An answer decided before the request body was read (a wrong key, a declared length over the
 * limit, an unknown table of a CSV import) reaches the client only if the client is not still
 * sending when the connection closes: closing with a body unread makes the kernel reset the
 * connection, and the client gets EPIPE or ECONNRESET instead of the answer. So a body nobody
 * has started to read is read and dropped (never kept) before the answer is sent, within
 * bounds: up to DRAIN_LIMIT_BYTES (more than any body a route takes: the CSV import's 58 MiB),
 * while data keeps coming (a client that sends nothing for DRAIN_IDLE_MS has nothing in flight
 * for the close to cut), and for DRAIN_TIME_MS at most. Past a bound the answer goes at once and
 * the connection is closed. A body refused while it was being read (a CSV file growing past its
 * limit, a chunked body past 6 MiB) is answered at once, and the connection closed: reading on
 * would only delay the answer.
 */
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;
const DRAIN_IDLE_MS = 1_000;
const DRAIN_TIME_MS = 30_000;

/** The connections whose request body is being drained, and how to stop that. */
const draining = new WeakMap<Socket, () => void>();

/**
 * Reads what is left of the body when nobody has read it. A body read to its end leaves the
 * connection as the request asked; otherwise the answer closes it.
 */
export async function settleUnreadBody(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (!(await drain(request))) reply.header('connection', 'close');
}

/**
 * Stops the draining of a request on this connection, whose answer then goes at once: Node
 * could not read the rest of it (the client ended the connection halfway, or broke the
 * framing). Returns whether one was being drained.
 */
export function stopDraining(socket: Socket): boolean {
  const stop = draining.get(socket);
  stop?.();
  return stop !== undefined;
}

function drain(request: FastifyRequest): Promise<boolean> {
  const raw = request.raw;
  if (raw.complete) return Promise.resolve(true);
  if (raw.readableDidRead || raw.readableFlowing !== null || raw.destroyed) return Promise.resolve(false);
  if (Number(request.headers['content-length']) > DRAIN_LIMIT_BYTES) return Promise.resolve(false);
  return new Promise((resolve) => {
    let bytes = 0;
    const finish = (complete: boolean) => {
      clearTimeout(idle);
      clearTimeout(overall);
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('close', onClose);
      draining.delete(raw.socket);
      resolve(complete);
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > DRAIN_LIMIT_BYTES) return finish(false);
      idle.refresh();
    };
    const onEnd = () => finish(true);
    const onClose = () => finish(raw.complete);
    const idle = setTimeout(() => finish(false), DRAIN_IDLE_MS);
    const overall = setTimeout(() => finish(false), DRAIN_TIME_MS);
    draining.set(raw.socket, () => finish(false));
    raw.on('data', onData);
    raw.once('end', onEnd);
    raw.once('close', onClose);
    raw.resume();
  });
}
