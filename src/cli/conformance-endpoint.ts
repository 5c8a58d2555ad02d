import { randomBytes } from 'node:crypto';
import type { EndpointTarget } from '../conformance/index.ts';
import { UsageError } from '../errors.ts';
import type { ConfigFlags } from './config-option.ts';
import { loadCommandConfig } from './command-config.ts';

/** The settings that point wsmirror at an upstream; any of them means "use the upstream". */
const UPSTREAM_VARIABLES = ['WSMIRROR_BASE_URL', 'WSMIRROR_API_KEY', 'WSMIRROR_API_KEY_FILE', 'WSMIRROR_WORKSPACE_ID', 'WSMIRROR_CONFIG'];

/** The module the embedded emulator is started with when `--module` is not given. */
export const EMBEDDED_MODULE = 'scratch';

export interface ConformanceEndpoint {
  target: EndpointTarget;
  module: string;
  /** `upstream`: the configured endpoint; `embedded`: an emulator in this process. */
  kind: 'upstream' | 'embedded';
  close(): Promise<void>;
}

/**
 * The endpoint `wsmirror conformance` checks: the upstream of the configuration (the same
 * settings and loading as `wsmirror sync`), or, when nothing names an upstream, an emulator
 * started here with one empty module, so the command alone shows the suite at work.
 */
export async function conformanceEndpoint(flags: ConfigFlags, module: string | undefined): Promise<ConformanceEndpoint> {
  const local = loadCommandConfig(flags, { upstream: 'optional' });
  const named = flags.config !== undefined || UPSTREAM_VARIABLES.some((v) => (process.env[v] ?? '') !== '');
  if (local.upstream !== null || named) {
    // Loaded again as `sync` does, so a half-configured upstream fails naming what is missing.
    const upstream = local.upstream ?? loadCommandConfig(flags).upstream;
    if (module === undefined) throw new UsageError('--module NAME is required against an upstream: the scratch tables are made inside that existing module');
    return { target: { baseUrl: upstream.baseUrl, apiKey: upstream.apiKey, workspaceId: upstream.workspaceId }, module, kind: 'upstream', close: async () => {} };
  }
  const emulator = await import('../emulator/index.ts');
  const name = module ?? EMBEDDED_MODULE;
  // A fresh key for this emulator only.
  const apiKey = `conformance-${randomBytes(12).toString('hex')}`;
  const workspaceId = emulator.DEFAULT_WORKSPACE_ID;
  const app = await emulator.buildServer({ workspaceId, apiKeys: [{ key: apiKey, grants: 'all' }], seed: { modules: [{ name, tables: [] }] } });
  try {
    const baseUrl = await emulator.listen(app, { host: '127.0.0.1', port: 0 });
    return { target: { baseUrl, apiKey, workspaceId }, module: name, kind: 'embedded', close: () => app.close() };
  } catch (error) {
    await app.close();
    throw error;
  }
}
