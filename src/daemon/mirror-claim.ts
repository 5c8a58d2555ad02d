/**
 * Whose mirror this is: the workspace it mirrors, the upstream address it was synced from and,
 * for the demo's own files, who made it. All are kept as cursor rows (small text values the
 * mirror stores and the engine never reads), written when a command first opens the mirror.
 * Refused before anything is written to the mirror:
 * - a mirror of another workspace: a sync would drop every table the configured one lacks;
 * - the same workspace id at another address (a staging copy, the demo's own emulator): the
 *   mirror's cursors count the changes the first upstream made, so a sync from another would
 *   miss changes without a word. `sync --upstream-moved` follows the same upstream at a new
 *   address (UpstreamMove `follow`); `resync` of every table moves the mirror to another copy
 *   (`followUpstream`).
 */
import { ConfigError } from '../errors.ts';
import { SCHEMA_CURSOR_KEY, type Mirror } from '../mirror/index.ts';

const WORKSPACE_KEY = 'mirror:workspace';
const UPSTREAM_KEY = 'mirror:upstream';
const CREATED_BY_KEY = 'mirror:created-by';
/** The value of `mirror:created-by` on a file `wsmirror demo` created itself. */
export const DEMO_CREATOR = 'demo';

export interface MirrorClaim {
  /** The workspace the mirror holds; undefined for a new mirror (or one made before claims). */
  workspaceId: string | undefined;
  /** The upstream address it was synced from (`upstreamAddress`); undefined for a new mirror or one made before. */
  upstream: string | undefined;
  /** `demo` on a file the demo created and nothing else has written since. */
  createdBy: string | undefined;
}

/**
 * The address a mirror follows: the base URL's scheme, host, port and path, without credentials
 * (never stored) and without a trailing slash, as the URL parser normalises them.
 */
export function upstreamAddress(baseUrl: string): string {
  const url = new URL(baseUrl);
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

/** Reads the claim without writing anything. */
export async function readClaim(mirror: Pick<Mirror, 'getCursor'>): Promise<MirrorClaim> {
  return {
    workspaceId: await mirror.getCursor(WORKSPACE_KEY),
    upstream: await mirror.getCursor(UPSTREAM_KEY),
    createdBy: await mirror.getCursor(CREATED_BY_KEY),
  };
}

/** Why the mirror cannot be synced from `workspaceId` at `baseUrl`, or undefined. `wsmirror check` says it too. */
export function claimProblem(
  claim: MirrorClaim, mirrorUrl: string, workspaceId: string, baseUrl: string, options: { upstreamMayMove?: boolean } = {},
): string | undefined {
  if (claim.workspaceId !== undefined && claim.workspaceId !== workspaceId) {
    return `the mirror ${mirrorUrl} holds workspace ${claim.workspaceId}, not ${workspaceId} (upstream.workspaceId); `
      + 'give each workspace its own mirror (mirror.url, or mirror.pgSchema on Postgres)';
  }
  const address = upstreamAddress(baseUrl);
  if (claim.upstream === undefined || claim.upstream === address || options.upstreamMayMove === true) return undefined;
  const from = claim.createdBy === DEMO_CREATOR ? `was made by wsmirror demo from its own emulator at ${claim.upstream}` : `was synced from upstream ${claim.upstream}`;
  return `the mirror ${mirrorUrl} ${from}, and upstream.baseUrl now names ${address}: the mirror's cursors count the changes `
    + `${claim.upstream} made, so a sync from ${address} could miss changes. If ${address} is the same upstream at a new address (a new `
    + `host name, a proxy), run wsmirror sync --upstream-moved once: the mirror follows it and keeps its cursors. If it is another copy `
    + `of the workspace, run wsmirror resync with no table names and without --no-sync: every table is mirrored again from ${address} `
    + `(rows stay in place meanwhile; rows inserted here are created there, and edits of records of ${claim.upstream} are held as `
    + `failed for a look). Otherwise set upstream.baseUrl back to ${claim.upstream}`;
}

/**
 * What a command does with a mirror synced from another upstream address than the configured one:
 * refuse it (the default); `follow` the new address, keeping the cursors (`wsmirror sync
 * --upstream-moved`: the operator says it is the same upstream); or let it open, unbound, for a
 * resync of every table that `bindUpstream`s once the tables are reset (`rebind`).
 */
export type UpstreamMove = 'refuse' | 'follow' | 'rebind';

/**
 * Claims the mirror for `workspaceId` at `baseUrl`: refuses (ConfigError, exit 78) what
 * `claimProblem` finds, stamps what is not stamped yet. The demo marks its file as its own; any
 * other command removes that mark, so the demo never again takes over a file a real sync has written.
 */
export async function claimMirror(
  mirror: Mirror, workspaceId: string, baseUrl: string, options: { demo?: boolean; upstreamMove?: UpstreamMove } = {},
): Promise<void> {
  const move = options.upstreamMove ?? 'refuse';
  const claim = await readClaim(mirror);
  const problem = claimProblem(claim, mirror.displayUrl, workspaceId, baseUrl, { upstreamMayMove: move !== 'refuse' });
  if (problem !== undefined) throw new ConfigError(problem);
  if (claim.workspaceId === undefined) await mirror.setCursor(WORKSPACE_KEY, workspaceId);
  if (claim.upstream === undefined || (move === 'follow' && claim.upstream !== upstreamAddress(baseUrl))) await bindUpstream(mirror, baseUrl);
  const createdBy = options.demo === true ? DEMO_CREATOR : undefined;
  if (claim.createdBy !== createdBy) await mirror.setCursor(CREATED_BY_KEY, createdBy ?? null);
}

/** Records that the mirror follows `baseUrl` from now on. */
async function bindUpstream(mirror: Pick<Mirror, 'setCursor'>, baseUrl: string): Promise<void> {
  await mirror.setCursor(UPSTREAM_KEY, upstreamAddress(baseUrl));
}

/**
 * After a resync has marked every table (`resync` with no names): the mirror follows `baseUrl`
 * from now on, if it followed another address. Its schema is read whole again (the schema cursor
 * counted the other upstream's changes), and its pending updates and deletes of records are held
 * as failed: they were made to the records of the upstream it followed, and a record of the same
 * id here may be another one (`wsmirror outbox retry` sends them after a look). Each step can be
 * run again: a resync stopped midway leaves the old address recorded, so the next sync is still
 * refused and the resync is run again. Returns how many edits were held (0 when nothing moved).
 */
export async function followUpstream(mirror: Mirror, baseUrl: string): Promise<{ moved: boolean; held: number }> {
  const { upstream } = await readClaim(mirror);
  const address = upstreamAddress(baseUrl);
  if (upstream === undefined || upstream === address) return { moved: false, held: 0 };
  const held = await mirror.holdRecordEdits(`made to a record of upstream ${upstream}; the mirror follows ${address} since a `
    + `wsmirror resync, where a record of the same id may be another one: wsmirror outbox retry sends it there, discard drops it`);
  await mirror.setCursor(SCHEMA_CURSOR_KEY, null);
  await bindUpstream(mirror, baseUrl);
  return { moved: true, held };
}
