/** The SQL dialects a mirror can be kept in (one folder each under src/mirror/). */
export type DialectName = 'sqlite' | 'postgres';
