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

/** The grants a key may be given: the only ones with a meaning in the emulator. */
export const KNOWN_GRANTS: readonly string[] = [GRANT_MANAGE_PERMISSIONS, 'role:admin', 'role:editor', 'role:user'];

/**
 * An `--api-key` flag that cannot be taken. Its message never holds the key: it names the grant
 * or the rule at fault, and the caller names the flag.
 */
export class ApiKeyFlagError extends Error {}

/**
 * Parses the `--api-key` flag: `KEY` (every grant) or `KEY=grant1,grant2` (exactly those).
 * Refused: an empty key or one with whitespace (no bearer header could carry it), a grant the
 * emulator does not know (a typo would give a key quietly less than meant), and two roles.
 */
export function parseApiKeyFlag(flag: string): ApiKeyGrant {
  const eq = flag.indexOf('=');
  const key = eq === -1 ? flag : flag.slice(0, eq);
  if (key === '') throw new ApiKeyFlagError('the key is empty');
  if (/\s/.test(key)) throw new ApiKeyFlagError('the key contains whitespace');
  if (eq === -1) return { key, grants: 'all' };
  const grants = flag
    .slice(eq + 1)
    .split(',')
    .map((g) => g.trim())
    .filter((g) => g !== '');
  const unknown = grants.find((g) => !KNOWN_GRANTS.includes(g));
  if (unknown !== undefined) {
    throw new ApiKeyFlagError(`unknown grant ${JSON.stringify(unknown)}; known grants: ${KNOWN_GRANTS.join(', ')}`);
  }
  const roles = grants.filter((g) => g.startsWith('role:'));
  if (roles.length > 1) throw new ApiKeyFlagError(`two roles (${roles.join(', ')}): a key acts as one role`);
  return { key, grants };
}

export function hasGrant(key: ApiKeyGrant, grant: string): boolean {
  return key.grants === 'all' || key.grants.includes(grant);
}

export const MANAGE_PERMISSIONS = GRANT_MANAGE_PERMISSIONS;
