import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BodyTooLargeError, readBoundedBody } from '../../src/client/bounded-body.ts';
import { rejectionOf } from '../helpers/rejection.ts';

/** A body arriving in these chunks, as a socket hands them over. */
const bodyOf = (...chunks: string[]) => Readable.from(chunks.map((c) => Buffer.from(c)));

describe('readBoundedBody', () => {
  it('reads a body of declared length whole', async () => {
    const bytes = await readBoundedBody(bodyOf('{"a":', '1,"b":"', 'é"}'), 1024, '16');
    expect(bytes.toString('utf8')).toBe('{"a":1,"b":"é"}');
    expect(bytes.length).toBe(16);
  });

  it('reads a body without a declared length', async () => {
    expect((await readBoundedBody(bodyOf('ab', 'cd'), 1024)).toString()).toBe('abcd');
  });

  it('keeps every byte of a body longer than declared, and no more of one shorter', async () => {
    expect((await readBoundedBody(bodyOf('abc', 'def', 'gh'), 1024, '4')).toString()).toBe('abcdefgh');
    expect((await readBoundedBody(bodyOf('abc'), 1024, '10')).toString()).toBe('abc');
  });

  it('fails on a declared length over the limit before reading, and on more bytes than the limit', async () => {
    expect(await rejectionOf(readBoundedBody(bodyOf('abc'), 2, '3'))).toBeInstanceOf(BodyTooLargeError);
    expect(await rejectionOf(readBoundedBody(bodyOf('ab', 'cd'), 3))).toBeInstanceOf(BodyTooLargeError);
    expect(await rejectionOf(readBoundedBody(bodyOf('ab', 'cd'), 3, '2'))).toBeInstanceOf(BodyTooLargeError);
  });
});
