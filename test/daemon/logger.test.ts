import { describe, expect, it } from 'vitest';
import { createLogger, createLogRedactor } from '../../src/daemon/logger.ts';
import type { LoggerOptions } from '../../src/daemon/logger.ts';

const KEY = 'wsk_live_5f3a9c0e7d21b4aa';

/** A logger whose lines land in an array, parsed. */
function capture(options: Omit<LoggerOptions, 'destination'> = {}) {
  const raw: string[] = [];
  const logger = createLogger({ ...options, destination: { write: (line: string) => void raw.push(line) } });
  const lines = () => raw.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, raw, lines };
}

describe('logger', () => {
  it('writes one JSON object per line with an ISO time and a level label', () => {
    const { logger, raw, lines } = capture();
    logger.info({ table: 'crm.orders' }, 'pulled');
    expect(raw).toHaveLength(1);
    expect(raw[0]?.endsWith('\n')).toBe(true);
    expect(lines()[0]).toMatchObject({ level: 'info', msg: 'pulled', table: 'crm.orders' });
    expect(String(lines()[0]?.time)).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('honours the configured level', () => {
    const { logger, lines } = capture({ level: 'warn' });
    logger.info('hidden');
    logger.debug('hidden');
    logger.warn('shown');
    expect(lines().map((l) => l.msg)).toEqual(['shown']);
  });

  it('redacts apiKey and authorization fields at any depth, whatever their case', () => {
    const { logger, raw, lines } = capture({ secrets: [KEY] });
    logger.info({ apiKey: KEY, config: { upstream: { apiKey: 'another-key-value' } } }, 'config');
    logger.info({ request: { headers: { Authorization: 'Token abcdefgh', 'x-api-key': 'zzz-secret-zzz' } } }, 'req');
    logger.child({ api_key: 'child-binding-secret' }).info('child');
    const [config, request, child] = lines();
    expect(config).toMatchObject({ apiKey: '[Redacted]', config: { upstream: { apiKey: '[Redacted]' } } });
    expect(request).toMatchObject({ request: { headers: { Authorization: '[Redacted]', 'x-api-key': '[Redacted]' } } });
    expect(child).toMatchObject({ api_key: '[Redacted]' });
    const all = raw.join('');
    for (const secret of [KEY, 'another-key-value', 'abcdefgh', 'zzz-secret-zzz', 'child-binding-secret']) {
      expect(all).not.toContain(secret);
    }
  });

  it('removes the key and bearer tokens from messages, errors and stacks', () => {
    const { logger, raw, lines } = capture({ secrets: [KEY] });
    const error = new Error(`request failed with header Authorization: Bearer ${KEY}`);
    logger.error({ err: error }, `retrying with key ${KEY}`);
    logger.warn({ header: 'Bearer other.token-value_123' }, 'bearer');
    logger.info({ url: 'postgres://mirror:pg-password-1@db:5432/bi' }, 'mirror');
    const all = raw.join('');
    expect(all).not.toContain(KEY);
    expect(all).not.toContain('other.token-value_123');
    expect(all).not.toContain('pg-password-1');
    const [failed, bearer, mirror] = lines();
    expect(failed?.msg).toBe('retrying with key [Redacted]');
    expect((failed?.err as { message: string }).message).toBe('request failed with header Authorization: Bearer [Redacted]');
    expect(bearer?.header).toBe('Bearer [Redacted]');
    expect(mirror?.url).toBe('postgres://mirror:[Redacted]@db:5432/bi');
  });

  it('leaves ordinary lines untouched', () => {
    const redact = createLogRedactor([KEY, 'short']);
    const line = '{"level":"info","msg":"short rows: 12, keys: 3"}\n';
    expect(redact(line)).toBe(line);
  });
});
