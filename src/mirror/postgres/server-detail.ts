/**
 * A Postgres error with the server's DETAIL in its message: the primary message alone ("cannot
 * drop view … because other objects depend on it") leaves out what an operator must act on
 * ("view bi.mine depends on view …"), and logs show only the message. (The HINT is left out: it
 * advises whoever ran the statement, here wsmirror, as in "Use DROP ... CASCADE".) An error
 * caused by a setting of the server says which setting, and where it is set. The error stays
 * the same object, its code and fields untouched.
 */
export function withServerDetail(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  // Raised by wsmirror's own SQL (a trigger, the commit's guard), its message tells any SQL client
  // whose it is; the daemon's messages say so already.
  if (error.message.startsWith(OWN_PREFIX)) error.message = error.message.slice(OWN_PREFIX.length);
  const { detail } = error as { detail?: unknown };
  if (typeof detail === 'string' && detail !== '' && !error.message.includes(detail)) error.message = `${error.message}: ${detail}`;
  const setting = SETTING_AT_FAULT.find((s) => s.matches(error));
  if (setting !== undefined && !error.message.includes(setting.text)) error.message = `${error.message} (${setting.text})`;
  return error;
}

const OWN_PREFIX = 'wsmirror: ';

/** Whether the server cancelled the statement for its statement_timeout. */
export function isStatementTimeout(error: unknown): boolean {
  return sqlState(error) === '57014' && /statement timeout/.test((error as Error).message);
}

/** Whether the server refused to drop an object because others depend on it (the DETAIL names them). */
export function isDependentObjectsRefusal(error: unknown): boolean {
  return sqlState(error) === '2BP01';
}

function sqlState(error: unknown): string | undefined {
  const { code } = error as { code?: unknown };
  return typeof code === 'string' ? code : undefined;
}

const SETTING_AT_FAULT: readonly { matches: (error: Error) => boolean; text: string }[] = [
  {
    matches: isStatementTimeout,
    text: 'statement_timeout, set for wsmirror\'s role, its database or in the URL\'s options, cancelled it: '
      + 'raise it, e.g. ALTER ROLE … SET statement_timeout = 0, or options=-c statement_timeout=0 in the URL',
  },
  {
    // 25006 read_only_sql_transaction: a hot standby, or default_transaction_read_only on.
    matches: (error) => sqlState(error) === '25006',
    text: 'the session is read-only: a hot standby, or default_transaction_read_only set for wsmirror\'s role, its database '
      + 'or in the URL; wsmirror check says which',
  },
];
