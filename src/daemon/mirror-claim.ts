/**
 * Whose mirror this is: the workspace it mirrors and, for the demo's own files, who made it.
 * Both are kept as cursor rows (small text values the mirror stores and the engine never reads),
 * written when a command first opens the mirror. A mirror of another workspace is refused before
 * anything is written to it: a sync would otherwise drop every table the configured workspace
 * does not have.
 */
import { ConfigError } from '../errors.ts';
import type { Mirror } from '../mirror/index.ts';

const WORKSPACE_KEY = 'mirror:workspace';
const CREATED_BY_KEY = 'mirror:created-by';
/** The value of `mirror:created-by` on a file `wsmirror demo` created itself. */
export const DEMO_CREATOR = 'demo';

export interface MirrorClaim {
  /** The workspace the mirror holds; undefined for a new mirror (or one made before claims). */
  workspaceId: string | undefined;
  /** `demo` on a file the demo created and nothing else has written since. */
  createdBy: string | undefined;
}

/** Reads the claim without writing anything. */
export async function readClaim(mirror: Pick<Mirror, 'getCursor'>): Promise<MirrorClaim> {
  return { workspaceId: await mirror.getCursor(WORKSPACE_KEY), createdBy: await mirror.getCursor(CREATED_BY_KEY) };
}

/**
 * Claims the mirror for `workspaceId`: refuses (ConfigError, exit 78) a mirror of another
 * workspace, stamps an unstamped one. The demo marks its file as its own; any other command
 * removes that mark, so the demo never again takes over a file a real sync has written.
 */
export async function claimMirror(mirror: Mirror, workspaceId: string, options: { demo?: boolean } = {}): Promise<void> {
  const claim = await readClaim(mirror);
  if (claim.workspaceId !== undefined && claim.workspaceId !== workspaceId) {
    throw new ConfigError(
      `the mirror ${mirror.displayUrl} holds workspace ${claim.workspaceId}, not ${workspaceId} (upstream.workspaceId); `
        + 'give each workspace its own mirror (mirror.url, or mirror.pgSchema on Postgres)',
    );
  }
  if (claim.workspaceId === undefined) await mirror.setCursor(WORKSPACE_KEY, workspaceId);
  const createdBy = options.demo === true ? DEMO_CREATOR : undefined;
  if (claim.createdBy !== createdBy) await mirror.setCursor(CREATED_BY_KEY, createdBy ?? null);
}
