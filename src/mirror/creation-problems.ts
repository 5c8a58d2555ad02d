import { DIALECTS } from './dialects.ts';
import { DEFAULT_PG_SCHEMA, parseMirrorUrl } from './mirror-url.ts';

/**
 * For a mirror not made yet at `url`: what would keep this process from creating it at the first
 * sync (a directory it cannot write, a Postgres privilege), one line each. Reads only.
 */
export async function mirrorCreationProblems(url: string, options: { pgSchema?: string } = {}): Promise<string[]> {
  const location = parseMirrorUrl(url);
  return DIALECTS[location.dialect].creationProblems(location, { pgSchema: options.pgSchema ?? DEFAULT_PG_SCHEMA });
}
