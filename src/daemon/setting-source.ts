import type { SettingSource } from './config-types.ts';

/**
 * Where a setting was set, for a message: the variable, or the configuration file (its absolute
 * path, else the label of a configuration given as an object), or its default.
 */
export function settingSourceName(source: SettingSource): string {
  if (source === 'default') return 'default';
  return 'variable' in source ? source.variable : source.configFile ?? source.label;
}

/** `WSMIRROR_TABLES_INCLUDE`, `set in /etc/wsmirror/wsmirror.yaml` or `not set: its default`, for a parenthesis. */
export function describeSettingSource(source: SettingSource): string {
  if (source === 'default') return 'not set: its default';
  return 'variable' in source ? source.variable : `set in ${settingSourceName(source)}`;
}
