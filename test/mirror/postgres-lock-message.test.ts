import { expect, it } from 'vitest';
import { lockedMessage, type Holder } from '../../src/mirror/postgres/schema-change-locks.ts';

/**
 * What a schema change held back by locks says of the sessions that held them: one transaction
 * left open is named with the way to end it; queries that kept starting and ending (dashboards
 * under load, each transaction younger than the wait) are not worth ending, and the message says
 * the change goes in once they pause instead of offering pg_terminate_backend.
 */
const holder = (pid: number, openFor: string): Holder => ({
  pid, relations: ['crm__companies_v'], application: 'bi-dashboard', user: 'bi', state: 'active', openFor,
});

it('offers to end a session whose transaction outlasted the wait', () => {
  const text = lockedMessage('the change needs an exclusive lock on crm__companies_v', [holder(41, '00:02:10'), holder(42, '00:00:01')], { waitedMs: 5_000 });
  expect(text).toContain('pid 41');
  expect(text).toContain('pg_terminate_backend');
});

it('says queries kept reading when every holder began within the wait, and offers to end none', () => {
  for (const holders of [[holder(41, '00:00:00')], [holder(41, '00:00:01'), holder(42, '00:00:04')]]) {
    const text = lockedMessage('the change needs an exclusive lock on crm__companies_v', holders, { waitedMs: 5_000 });
    expect(text).toContain('queries kept reading');
    expect(text).toContain('pid 41');
    expect(text).not.toContain('pg_terminate_backend');
  }
});

it('reads ages of days as long', () => {
  const text = lockedMessage('needs', [holder(41, '2 days 00:00:01')], { waitedMs: 5_000 });
  expect(text).toContain('pg_terminate_backend');
});
