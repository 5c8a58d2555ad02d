import type Database from 'better-sqlite3';

/** The emulator's store: one SQLite connection (database.ts opens it and creates its tables). */
export type Db = Database.Database;
