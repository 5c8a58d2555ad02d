import type { Config, LocalConfig } from './config-types.ts';
import { describeUnknownVariable, unknownEnvironmentVariables } from './config-variables.ts';
import { redactConfig } from './load-config.ts';
import type { Logger } from './logger.ts';

/**
 * Logs the effective configuration (key and passwords hidden) at debug, the configuration's own
 * warnings, and warns about `WSMIRROR_*` variables that configure nothing (most likely misspelt).
 */
export function logConfiguration(
  logger: Pick<Logger, 'debug' | 'warn'>,
  config: Config | LocalConfig,
  env: Readonly<Record<string, string | undefined>> = process.env,
): void {
  logger.debug({ config: redactConfig(config) }, 'configuration');
  for (const warning of config.warnings) logger.warn({}, warning);
  const unknown = unknownEnvironmentVariables(env);
  if (unknown.length > 0) {
    logger.warn({ variables: unknown }, `ignoring unknown environment variables: ${unknown.map(describeUnknownVariable).join(', ')}`);
  }
}
