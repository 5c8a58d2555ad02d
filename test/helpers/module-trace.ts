/**
 * Preloaded with `--import` into a wsmirror process: at exit, writes to the file named by
 * WSMIRROR_TEST_MODULE_TRACE a JSON object with the URL of every module the process loaded and
 * its V8 heap size limit. Tells which modules a command really loads and how Node was started
 * (test/cli/start-up.test.ts).
 */
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { getHeapStatistics } from 'node:v8';

const loaded = new Set<string>();
registerHooks({
  load(url, context, next) {
    loaded.add(url);
    return next(url, context);
  },
});
process.on('exit', () => {
  const file = process.env['WSMIRROR_TEST_MODULE_TRACE'];
  if (file) writeFileSync(file, JSON.stringify({ modules: [...loaded], heapSizeLimit: getHeapStatistics().heap_size_limit }));
});
