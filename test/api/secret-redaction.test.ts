import { describe, expect, it } from 'vitest';
import { createRedactor, redactUrlPasswords, unparsedUrlForMessages } from '../../src/api/secret-redaction.ts';

describe('redactUrlPasswords', () => {
  it('hides a password whatever it holds, up to the last @ before the host', () => {
    for (const password of ['my secret/pw', 'pa ss', 'p@ss:w/rd#?%&', 's3cret', 'a/b/c', 'x y@z', '@', 'p%40ss']) {
      expect(redactUrlPasswords(`postgres://dba_ws:${password}@127.0.0.1:25433/db`)).toBe('postgres://dba_ws:[Redacted]@127.0.0.1:25433/db');
    }
  });

  it('hides it in a URL quoted in a message, keeping the rest of the message', () => {
    expect(redactUrlPasswords('WSMIRROR_MIRROR_URL: "postgres://dba_ws:p@ss:w/rd#?%&@127.0.0.1:25433/db" is not a URL, mail admin@example.com'))
      .toBe('WSMIRROR_MIRROR_URL: "postgres://dba_ws:[Redacted]@127.0.0.1:25433/db" is not a URL, mail admin@example.com');
    expect(redactUrlPasswords('cannot reach postgres://dba_ws:pa ss@db/x: connect ECONNREFUSED'))
      .toBe('cannot reach postgres://dba_ws:[Redacted]@db/x: connect ECONNREFUSED');
  });

  it('keeps a JSON log line JSON, and hides a password holding an escaped quote', () => {
    const line = JSON.stringify({ mirror: 'postgres://u:my "secret"/pw@h/db', msg: 'sent to ops@example.com' });
    const out = redactUrlPasswords(line);
    expect(JSON.parse(out)).toEqual({ mirror: 'postgres://u:[Redacted]@h/db', msg: 'sent to ops@example.com' });
  });

  it('hides the password after a user name holding an @ (user@server)', () => {
    expect(redactUrlPasswords('postgres://wsmirror@dbserver:pw/1@dbserver.example.com/db')).toBe('postgres://wsmirror@dbserver:[Redacted]@dbserver.example.com/db');
  });

  it('hides a password holding " or ending in \\, and one after a user name holding ", in plain text and in JSON', () => {
    for (const [user, password] of [['u2', 'ab"cdSECRET'], ['u2', 'abSECRET\\'], ['u"x', 'SECRETpw'], ['u2', 'a"b\\SECRET\\']]) {
      const url = `postgres://${user}:${password}@127.0.0.1:25498/db`;
      const hidden = `postgres://${user}:[Redacted]@127.0.0.1:25498/db`;
      expect(redactUrlPasswords(`cannot reach the Postgres mirror ${url}: connect ECONNREFUSED`)).toBe(`cannot reach the Postgres mirror ${hidden}: connect ECONNREFUSED`);
      const line = JSON.stringify({ mirror: url, msg: `${url} failed`, to: 'ops@example.com' });
      expect(JSON.parse(redactUrlPasswords(line))).toEqual({ mirror: hidden, msg: `${hidden} failed`, to: 'ops@example.com' });
    }
  });

  it('hides the value of a password parameter whose name is percent-encoded', () => {
    expect(redactUrlPasswords('postgres://h/db?pass%77ord=SECRET3&%73slpassword=SECRET4&application_name=bi'))
      .toBe('postgres://h/db?pass%77ord=[Redacted]&%73slpassword=[Redacted]&application_name=bi');
    expect(redactUrlPasswords('host=db PASSWORD = \'a b\' user=u')).toBe('host=db PASSWORD = [Redacted] user=u');
  });

  it('leaves URLs without a password and other text as they are', () => {
    for (const text of [
      'postgres://wsmirror@127.0.0.1:5432/db', 'http://127.0.0.1:8787/api/v1 answered 503', 'sqlite:/var/lib/wsmirror/wsmirror.db',
      'postgres://127.0.0.1:5432/db?application_name=bi', 'records.list (GET /workspace/ab/records) failed with HTTP 422: "a@b" is no name',
    ]) {
      expect(redactUrlPasswords(text)).toBe(text);
    }
  });

  it('hides a password given as a parameter, and the secrets given to a redactor', () => {
    expect(redactUrlPasswords('postgres://h/db?user=u&password=pw1 x')).toBe('postgres://h/db?user=u&password=[Redacted] x');
    expect(createRedactor(['key-0123456789'])('Bearer abc and key-0123456789')).toBe('Bearer [Redacted] and [Redacted]');
  });
});

describe('unparsedUrlForMessages', () => {
  it('shows host:port as given: a port is not a password', () => {
    for (const value of ['127.0.0.1:8787', 'localhost:8787', 'db.example.com:443/base', '[::1]:8787', 'localhost']) {
      expect(unparsedUrlForMessages(value)).toBe(value);
    }
  });

  it('hides whatever could be credentials: a user part before an @, text after a colon that is no port, a password parameter', () => {
    expect(unparsedUrlForMessages('us3r:s3cret@127.0.0.1:8787')).toBe('us3r:[Redacted]');
    expect(unparsedUrlForMessages('us3r:8787@db')).toBe('us3r:[Redacted]');
    expect(unparsedUrlForMessages('postgres:/u:s3cret@db/x')).toBe('postgres:/u:[Redacted]');
    expect(unparsedUrlForMessages('u:s3cret')).toBe('u:[Redacted]');
    expect(unparsedUrlForMessages('u:8787s3cret')).toBe('u:[Redacted]');
    expect(unparsedUrlForMessages('db:5432/x?password=s3cret')).toBe('db:5432/x?password=[Redacted]');
    expect(unparsedUrlForMessages('t0ken@db:5432')).toBe('[Redacted]@db:5432');
    // Where a user may be a token (a base URL), the whole user part goes.
    expect(unparsedUrlForMessages('us3r:s3cret@127.0.0.1:8787', { keepUser: false })).toBe('[Redacted]@127.0.0.1:8787');
    expect(unparsedUrlForMessages('http://us3r:s3c@ret@127.0.0.1:99999', { keepUser: false })).toBe('http://[Redacted]@127.0.0.1:99999');
  });
});
