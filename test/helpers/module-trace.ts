/**
 * Preloaded with `--import` into a wsmirror process: at exit, writes the URL of every module it
 * loaded, one a line, to the file named by WSMIRROR_TEST_MODULE_TRACE. Tells which modules a
 * command really loads (test/cli/start-up.test.ts).
 */
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const loaded = new Set<string>();
registerHooks({
  load(url, context, next) {
    loaded.add(url);
    return next(url, context);
  },
});
process.on('exit', () => {
  const file = process.env['WSMIRROR_TEST_MODULE_TRACE'];
  if (file) writeFileSync(file, [...loaded].join('\n'));
});
