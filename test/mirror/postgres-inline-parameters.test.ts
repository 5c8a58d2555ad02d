import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inlineParameters } from '../../src/mirror/postgres/inline-parameters.ts';

/**
 * Several catalog writes go to Postgres as one simple query, their parameters written in as
 * literals (src/mirror/postgres/inline-parameters.ts). The values are upstream's (error messages,
 * cursors), so every one of them must arrive as it was, and none may change the statement.
 */

describe('inlining bind parameters', () => {
  it('writes each placeholder as a literal, and leaves those inside quotes alone', () => {
    expect(inlineParameters(`update "t$1" set "a" = $1, "b" = $2 where "c" = '$3' and "d" = $3`, ["it's", null, -2]))
      .toBe(`update "t$1" set "a" = 'it''s', "b" = NULL where "c" = '$3' and "d" = (-2)`);
    expect(inlineParameters('select $10, $1', [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])).toBe('select 10, 1');
  });

  it('refuses what it does not read, and values without a literal form', () => {
    expect(() => inlineParameters('select $$ $1 $$', [1])).toThrow(/cannot inline/);
    expect(() => inlineParameters("select E'\\n', $1", [1])).toThrow(/cannot inline/);
    expect(() => inlineParameters('select 1 -- $1', [1])).toThrow(/cannot inline/);
    expect(() => inlineParameters('select x--1, $1', [1])).toThrow(/cannot inline/);
    expect(() => inlineParameters('select 1 /* $1 */', [1])).toThrow(/cannot inline/);
    // Inside quotes they are text like any other.
    expect(inlineParameters(`select "a--b", 'x /* $$ E''y', $1 from "table"`, [1])).toBe(`select "a--b", 'x /* $$ E''y', 1 from "table"`);
    expect(() => inlineParameters('select $2', [1])).toThrow(/no parameter \$2/);
    expect(() => inlineParameters('select $1', [{}])).toThrow(/no literal/);
    expect(() => inlineParameters('select $1', [Number.NaN])).toThrow(/no literal/);
    expect(() => inlineParameters(`select 'open`, [])).toThrow(/unterminated/);
  });
});

const PG_URL = process.env['WSMIRROR_TEST_PG_URL']!;

describe('inlined values on a real server', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    // As the mirror's connections have it; with it off, a backslash would start an escape.
    await client.query('SET standard_conforming_strings = on');
    await client.query('CREATE TEMP TABLE inlined (k integer, v text)');
  });
  afterAll(async () => {
    await client?.end();
  });

  const hostile = [
    "it's", "''", "\\", "\\'; DROP TABLE inlined; --", '$1', '$$', "E'x'", '-- comment', '/* c */', '"quoted"',
    'line\nbreak\ttab', 'ünïcödé 😀 中文', ' ', '',
  ];

  it('brings every value back as it was', async () => {
    const statements = hostile.map((v, k) => inlineParameters('insert into "inlined" ("k", "v") values ($1, $2)', [k, v]));
    await client.query(statements.join(';\n'));
    const { rows } = await client.query<{ k: number; v: string }>('select k, v from inlined order by k');
    expect(rows.map((r) => r.v)).toEqual(hostile);
  });
});
