/**
 * Loaded into every test file's process (`--import`, see TEST_RUNNER_FLAGS): once the file's tests
 * and hooks are over, a file whose handles still hold its event loop open (a failed `before()`
 * that left a server or a child process behind) is ended after EXIT_GRACE_MS instead of holding
 * the run open. The timer is unref'd, so a file that ends by itself ends exactly as before.
 *
 * Why not `--test-force-exit`: under process isolation it drops the tail of a file's already-run
 * verdicts before the parent reads them (nodejs/node#64833) — a run reported fewer tests than ran,
 * at exit 0, and a failure in that tail would have gone unseen. Waiting a grace period lets the
 * child's report reach the parent first.
 */
import { after } from 'node:test';

const EXIT_GRACE_MS = 30_000;

after(() => {
  setTimeout(() => {
    process.stderr.write(`test-watchdog: handles still open ${EXIT_GRACE_MS / 1000} s after this file's tests ended; exiting\n`);
    process.exit();
  }, EXIT_GRACE_MS).unref();
});
