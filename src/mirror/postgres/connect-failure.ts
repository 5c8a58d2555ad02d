import { ConfigError, MirrorUnavailableError, type WsmirrorError } from '../../errors.ts';
import { isStatementTimeout, withServerDetail } from './server-detail.ts';

/**
 * What a failure to connect to (or open) the mirror's database asks for. A server that cannot be
 * reached, or refuses for a reason that passes, needs only time: MirrorUnavailableError (exit 1;
 * `wsmirror run` tries again at its next cycle). A refused role or password, an unknown
 * database, a missing privilege need a setting or a grant changed: ConfigError (exit 78, which
 * the systemd unit does not restart). A failure not known to pass counts as the second kind.
 * `failed` says what could not be done (`cannot reach`), `mirror` which mirror; a statement the
 * server cancelled for its statement_timeout reached it, and is told as such.
 */
export function connectFailure(failed: string, mirror: string, error: unknown): WsmirrorError {
  const reason = withServerDetail(error);
  const text = reason instanceof Error ? reason.message : String(reason);
  const message = isStatementTimeout(error) ? `${mirror}: ${text}` : `${failed} ${mirror}: ${text}`;
  return failurePasses(error) ? new MirrorUnavailableError(message, { cause: error }) : new ConfigError(message, { cause: error });
}

// A server down or restarting, a network or a DNS name not up yet. ENOTFOUND too: at boot the
// name of a database (a container, a service name) often resolves only once it has started, and
// the message names the host, so a misspelt one shows in every attempt's line.
const PASSING_SYSTEM_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN',
  'EAI_AGAIN', 'ENOTFOUND',
]);

/**
 * No socket file where a Unix-domain socket URL points (ENOENT of the connect, not of a file
 * read such as an sslrootcert's): the server has not started yet, or is restarting.
 */
function isMissingSocket(error: Error): boolean {
  const { code, syscall } = error as { code?: unknown; syscall?: unknown };
  return code === 'ENOENT' && syscall === 'connect';
}

// SQLSTATEs: connection exceptions (class 08, but a protocol violation: not a Postgres server),
// insufficient resources (class 53: too many connections, for the server or the role, or slots
// reserved; disk full; out of memory), the server shutting down or starting up (57P01-57P03),
// a session ended by idle_session_timeout (57P05), a statement cancelled (57014, by
// statement_timeout), a serialization failure or deadlock (40001, 40P01), a lock not granted in
// time (55P03).
const PASSING_SQLSTATE = /^(?:08(?!P01)...|53...|57P0[1235]|57014|40001|40P01|55P03)$/;

// pg's own errors, without a code, of a connection that did not come up in time or broke off.
const PASSING_MESSAGE = /^(?:Connection terminated|timeout expired|timeout exceeded when trying to connect|Query read timeout)/;

/**
 * A query's failure as the mirror reports it: when its session ended under it (a server restart
 * or crash, an administrator's pg_terminate_backend, idle_session_timeout, a connection broken
 * off), a MirrorUnavailableError, which a new session may not meet (`sync` exits 1, `run` tries
 * again at its next cycle); any other failure unchanged.
 */
export function sessionEndedError(error: unknown): unknown {
  if (!sessionEnded(error)) return error;
  return new MirrorUnavailableError(`the Postgres mirror's connection ended while in use: ${(error as Error).message}`, { cause: error });
}

// SQLSTATEs of a session ended by the server: connection exceptions (class 08), an
// administrator's command or a shutdown (57P01), a crash of another backend (57P02), an
// idle_session_timeout (57P05).
const SESSION_ENDED_SQLSTATE = /^(?:08...|57P0[125])$/;

// A connection broken off under a query.
const SESSION_ENDED_SYSTEM_CODES = new Set(['ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE']);

// pg's own errors of a client whose connection ended before (or while) it sent a query.
const CLIENT_ENDED_MESSAGE = /^(?:Connection terminated|Client has encountered a connection error|Client was closed|Query read timeout)/;

function sessionEnded(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code } = error as { code?: unknown };
  if (typeof code === 'string' && (SESSION_ENDED_SQLSTATE.test(code) || SESSION_ENDED_SYSTEM_CODES.has(code))) return true;
  return CLIENT_ENDED_MESSAGE.test(error.message);
}

/** Whether trying again later may succeed with nothing changed. */
export function failurePasses(error: unknown): boolean {
  if (error instanceof MirrorUnavailableError) return true;
  if (!(error instanceof Error)) return false;
  const { code } = error as { code?: unknown };
  if (typeof code === 'string' && (PASSING_SYSTEM_CODES.has(code) || PASSING_SQLSTATE.test(code))) return true;
  if (isMissingSocket(error)) return true;
  if (PASSING_MESSAGE.test(error.message)) return true;
  // Every address of a name refused (IPv6 and IPv4 of localhost): Node's AggregateError.
  if (error instanceof AggregateError) return error.errors.some(failurePasses);
  return false;
}
