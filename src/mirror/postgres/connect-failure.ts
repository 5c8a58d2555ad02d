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

// SQLSTATEs: connection exceptions (class 08, but a protocol violation: not a Postgres server),
// insufficient resources (class 53: too many connections, for the server or the role, or slots
// reserved; disk full; out of memory), the server shutting down or starting up (57P01-57P03),
// a session ended by idle_session_timeout (57P05), a statement cancelled (57014, by
// statement_timeout), a serialization failure or deadlock (40001, 40P01), a lock not granted in
// time (55P03).
const PASSING_SQLSTATE = /^(?:08(?!P01)...|53...|57P0[1235]|57014|40001|40P01|55P03)$/;

// pg's own errors, without a code, of a connection that did not come up in time or broke off.
const PASSING_MESSAGE = /^(?:Connection terminated|timeout expired|timeout exceeded when trying to connect|Query read timeout)/;

/** Whether trying again later may succeed with nothing changed. */
export function failurePasses(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code } = error as { code?: unknown };
  if (typeof code === 'string' && (PASSING_SYSTEM_CODES.has(code) || PASSING_SQLSTATE.test(code))) return true;
  if (PASSING_MESSAGE.test(error.message)) return true;
  // Every address of a name refused (IPv6 and IPv4 of localhost): Node's AggregateError.
  if (error instanceof AggregateError) return error.errors.some(failurePasses);
  return false;
}
