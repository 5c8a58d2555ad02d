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
 * Parses the `--api-key` flag: `KEY` (every grant) or `KEY=GRANTS`, GRANTS being `all`, `none`,
 * nothing (none, as `KEY=`) or grants separated by commas. A key may hold `=`: the grants follow
 * the last one, so a key holding `=` (base64 padding) is written with its grants
 * (`c2VjcmV0a2V5===all`). Refused: an empty key or one with whitespace (no bearer
 * header could carry it), a grant the emulator does not know (a typo would give a key quietly
 * less than meant), and two roles.
 */
export function parseApiKeyFlag(flag: string): ApiKeyGrant {
  const eq = flag.lastIndexOf('=');
  const key = eq === -1 ? flag : flag.slice(0, eq);
  if (/^=*$/.test(key)) throw new ApiKeyFlagError('the key is empty');
  if (/\s/.test(key)) throw new ApiKeyFlagError('the key contains whitespace');
  return { key, grants: eq === -1 ? 'all' : parseGrants(flag.slice(eq + 1)) };
}

/** A grant's shape: only text of this shape is repeated in a message (other text may be part of a key). */
const GRANT_SHAPE = /^[a-z]+:[a-z-]+$/;

function parseGrants(text: string): ApiKeyGrant['grants'] {
  if (text === '') return [];
  const grants = text
    .split(',')
    .map((g) => g.trim())
    .filter((g) => g !== '');
  if (grants.length === 1 && grants[0] === 'all') return 'all';
  if (grants.length === 1 && grants[0] === 'none') return [];
  if (grants.includes('all') || grants.includes('none')) throw new ApiKeyFlagError('"all" and "none" stand alone');
  const unknown = grants.find((g) => !KNOWN_GRANTS.includes(g));
  if (unknown !== undefined && GRANT_SHAPE.test(unknown)) {
    throw new ApiKeyFlagError(`unknown grant ${JSON.stringify(unknown)}; known grants: ${KNOWN_GRANTS.join(', ')}`);
  }
  if (unknown !== undefined || grants.length === 0) {
    throw new ApiKeyFlagError(
      `the text after the last "=" is not a list of grants (all, none, or ${KNOWN_GRANTS.join(', ')}); ` +
        'a key that holds "=" is written with its grants: KEY=all',
    );
  }
  const roles = grants.filter((g) => g.startsWith('role:'));
  if (roles.length > 1) throw new ApiKeyFlagError(`two roles (${roles.join(', ')}): a key acts as one role`);
  return grants;
}

export function hasGrant(key: ApiKeyGrant, grant: string): boolean {
  return key.grants === 'all' || key.grants.includes(grant);
}

export const MANAGE_PERMISSIONS = GRANT_MANAGE_PERMISSIONS;
