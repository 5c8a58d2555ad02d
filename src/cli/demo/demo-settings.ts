/** The demo's fixed settings, small enough for the command line to load at start-up. */

export const DEFAULT_DEMO_DB = './wsmirror-demo.db';
/** How often `--keep-running` syncs: short, so a change shows up while the user watches. */
export const DEMO_SCHEDULE = '5s';
/** Between two of the changes `--keep-running` makes upstream itself. */
export const OWN_CHANGE_EVERY_MS = 8_000;
