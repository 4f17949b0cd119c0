/**
 * `virt-reconciler handback`: stop writing, let in-flight keys settle, release virt-controller's
 * Lease; a standby virt-controller takes it at its next retry (docs/cutover.md). The Lease is
 * first marked as being handed back, which every function reads within one fence period; with the
 * embedded queue (`--db`) the command then waits for the keys in flight to settle.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CONTROLLERS } from '../../shared/controllers.ts';
import { DEFAULT_LEASE_CACHE_MS } from '../../shared/cutover/gate.ts';
import { CliError, intFlag, parseFlags, type Command } from '../command.ts';
import { LEASE_FLAGS, LEASE_HELP, leaseClientFor } from '../lease-flags.ts';
import { openQueueBackend } from '../queue-backend.ts';

const HELP = `usage: virt-reconciler handback [flags]

Stops our writes, lets the keys in flight settle, and releases virt-controller's Lease to a standby
virt-controller.

${LEASE_HELP}
  --settle-timeout S    give up waiting for in-flight keys after S seconds (default 60; the Lease is released anyway)`;

/** Waits for the embedded queue's keys in flight to settle (none to wait for without one: AWS, or no local runtime). */
async function settle(db: string | undefined, timeout: number): Promise<void> {
  let queue: ReturnType<typeof openQueueBackend>;
  try {
    queue = openQueueBackend({ db });
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    process.stdout.write(`no embedded queue (${err.message}): in-flight writes are fenced from now on\n`);
    return;
  }
  try {
    const until = Date.now() + timeout * 1000;
    for (;;) {
      const inFlight = (await Promise.all(CONTROLLERS.map((c) => queue.queue.depth(c)))).reduce((n, d) => n + d.inFlight, 0);
      if (inFlight === 0) return;
      if (Date.now() > until) {
        process.stdout.write(`${inFlight} keys still in flight after ${timeout} s: releasing anyway (their writes are fenced)\n`);
        return;
      }
      await sleep(250);
    }
  } finally {
    await queue.close();
  }
}

export const command: Command = {
  async run(argv) {
    const { values } = parseFlags(argv, { ...LEASE_FLAGS, 'settle-timeout': { type: 'string' }, help: { type: 'boolean', short: 'h' } });
    if (values.help) {
      process.stdout.write(HELP + '\n');
      return 0;
    }
    const timeout = intFlag('settle-timeout', values['settle-timeout'], 60, 0);
    const lease = leaseClientFor(values);
    if (!(await lease.markHandingBack())) throw new CliError(`the Lease is not ours (${lease.identity}): nothing to hand back ('virt-reconciler status')`, 1);
    // Every function reads the Lease at most one fence period later: no reconcile starts writing after this.
    await sleep(DEFAULT_LEASE_CACHE_MS + 500);
    await settle(values.db, timeout);
    await lease.release();
    process.stdout.write(`released virt-controller's Lease (${lease.namespace}): a standby virt-controller takes it at its next retry\n`);
    return 0;
  },
};
