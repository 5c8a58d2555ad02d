/**
 * The environment variables of the configuration: the contract names of DESIGN §2, and
 * `WSMIRROR_<SECTION>_<KEY>` for every other key of the file. A `WSMIRROR_*` variable that
 * configures nothing is most likely misspelt: the daemon warns and suggests the closest name.
 * The generic name of a key that has a contract name (`WSMIRROR_MIRROR_PG_SCHEMA`) is not
 * accepted, so that each key has one variable, but it is answered with the contract name.
 */
import { SECTIONS } from './config-schema.ts';
import { closestName } from './did-you-mean.ts';

const CONTRACT_VARIABLES: Readonly<Record<string, string>> = {
  'upstream.baseUrl': 'WSMIRROR_BASE_URL',
  'upstream.apiKey': 'WSMIRROR_API_KEY',
  'upstream.apiKeyFile': 'WSMIRROR_API_KEY_FILE',
  'upstream.workspaceId': 'WSMIRROR_WORKSPACE_ID',
  'mirror.url': 'WSMIRROR_MIRROR_URL',
  'mirror.pgSchema': 'WSMIRROR_PG_SCHEMA',
  'sync.schedule': 'WSMIRROR_SCHEDULE',
  'http.port': 'WSMIRROR_HTTP_PORT',
  'log.level': 'WSMIRROR_LOG_LEVEL',
};

/** Names the configuration file when `--config` is not given. */
export const CONFIG_FILE_VARIABLE = 'WSMIRROR_CONFIG';

/** `WSMIRROR_*` variables that belong to the project's tooling, not to the configuration. */
const NON_CONFIG_VARIABLE = /^WSMIRROR_(?:TEST_|NODE24_DIR$|CONFIG$)/;

export interface ConfigKey {
  /** `section.key`, as in the file. */
  readonly path: string;
  readonly section: keyof typeof SECTIONS;
  readonly key: string;
  /** The environment variable that overrides it. */
  readonly env: string;
}

function genericVariable(section: string, key: string): string {
  return `WSMIRROR_${section}_${key.replace(/([a-z0-9])([A-Z])/g, '$1_$2')}`.toUpperCase();
}

/** Every key of the file, in file order, with its environment variable. */
export const CONFIG_KEYS: readonly ConfigKey[] = Object.freeze(
  Object.entries(SECTIONS).flatMap(([section, schema]) =>
    Object.keys(schema.shape).map((key) => {
      const path = `${section}.${key}`;
      return Object.freeze({
        path,
        section: section as keyof typeof SECTIONS,
        key,
        env: CONTRACT_VARIABLES[path] ?? genericVariable(section, key),
      });
    }),
  ),
);

type Env = Readonly<Record<string, string | undefined>>;

/** `WSMIRROR_*` variables that configure nothing (likely typos), for the caller to warn about. */
export function unknownEnvironmentVariables(env: Env = process.env): string[] {
  const known = new Set(CONFIG_KEYS.map((k) => k.env));
  return Object.keys(env)
    .filter((name) => name.startsWith('WSMIRROR_') && !known.has(name) && !NON_CONFIG_VARIABLE.test(name))
    .sort();
}

/** `WSMIRROR_API_KY (did you mean WSMIRROR_API_KEY?)`, or the name alone when nothing is close. */
export function describeUnknownVariable(name: string): string {
  const contract = CONFIG_KEYS.find((k) => k.env !== genericVariable(k.section, k.key) && genericVariable(k.section, k.key) === name);
  if (contract !== undefined) return `${name} (did you mean ${contract.env}, the variable of ${contract.path}?)`;
  const known = [...CONFIG_KEYS.map((k) => k.env), CONFIG_FILE_VARIABLE];
  const close = closestName(name.replace(/^WSMIRROR_/, ''), known.map((k) => k.replace(/^WSMIRROR_/, '')));
  return close === undefined ? name : `${name} (did you mean WSMIRROR_${close}?)`;
}
