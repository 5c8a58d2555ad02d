/**
 * A Postgres error with the server's DETAIL in its message: the primary message alone ("cannot
 * drop view … because other objects depend on it") leaves out what an operator must act on
 * ("view bi.mine depends on view …"), and logs show only the message. (The HINT is left out: it
 * advises whoever ran the statement, here wsmirror, as in "Use DROP ... CASCADE".) The error
 * stays the same object, its code and fields untouched.
 */
export function withServerDetail(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const { detail } = error as { detail?: unknown };
  if (typeof detail === 'string' && detail !== '' && !error.message.includes(detail)) error.message = `${error.message}: ${detail}`;
  return error;
}
