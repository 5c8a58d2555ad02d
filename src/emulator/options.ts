import { GRANT_MANAGE_PERMISSIONS } from '../api/index.ts';

/** A bearer API key and the grants it carries. */
export interface ApiKeyGrant {
  key: string;
  /** `all` grants everything; otherwise exactly these grants (possibly none). */
  grants: 'all' | readonly string[];
}

export interface EmulatorOptions {
  /** 12 characters of a-z0-9; default `demo00000001`. */
  workspaceId?: string;
  /** Name returned by the workspace endpoint; default `Demo workspace`. */
  workspaceName?: string;
  apiKeys?: readonly ApiKeyGrant[];
  /** Enables `/_emulator/*` when set. */
  adminToken?: string;
  /** SQLite file that persists state across restarts; default in memory. */
  dataFile?: string;
  /** A workspace to load at start (the `--seed FILE` shape, already parsed from JSON). */
  seed?: unknown;
  /** Log requests with pino (off by default). */
  logRequests?: boolean;
}

export const DEFAULT_WORKSPACE_ID = 'demo00000001';

/** Parses the `--api-key` flag: `KEY` (every grant) or `KEY=grant1,grant2` (exactly those). */
export function parseApiKeyFlag(flag: string): ApiKeyGrant {
  const eq = flag.indexOf('=');
  if (eq === -1) return { key: flag, grants: 'all' };
  const key = flag.slice(0, eq);
  const grants = flag
    .slice(eq + 1)
    .split(',')
    .map((g) => g.trim())
    .filter((g) => g !== '');
  return { key, grants };
}

export function hasGrant(key: ApiKeyGrant, grant: string): boolean {
  return key.grants === 'all' || key.grants.includes(grant);
}

export const MANAGE_PERMISSIONS = GRANT_MANAGE_PERMISSIONS;
