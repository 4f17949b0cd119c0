/** `virt-reconciler status`: who holds virt-controller's Lease, since when, and what that means for us (docs/cutover.md). */
import { isHeldLive } from '../../shared/cutover/lease.ts';
import { writeModeOf } from '../../shared/cutover/gate.ts';
import { parseFlags, type Command } from '../command.ts';
import { ago, identityOf, LEASE_FLAGS, LEASE_HELP, leaseClientFor } from '../lease-flags.ts';

const HELP = `usage: virt-reconciler status [flags]

Who holds virt-controller's Lease (KubeVirt's leader election lock) and since when; whether we write.

${LEASE_HELP}
  --json                the Lease's fields as JSON`;

export const command: Command = {
  async run(argv) {
    const { values } = parseFlags(argv, { ...LEASE_FLAGS, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
    if (values.help) {
      process.stdout.write(HELP + '\n');
      return 0;
    }
    const lease = leaseClientFor(values);
    const { view } = await lease.read();
    const now = Date.now();
    const identity = identityOf(values);
    const live = isHeldLive(view, now);
    const ours = view.holder === identity;
    const mode = writeModeOf(view, identity, false, now);
    if (values.json) {
      process.stdout.write(JSON.stringify({ namespace: lease.namespace, ...view, live, ours, weWrite: mode === 'write' }, null, 2) + '\n');
      return 0;
    }
    if (!view.exists) {
      process.stdout.write(`virt-controller lease (${lease.namespace}): none yet — free; 'up' takes it\n`);
      return 0;
    }
    const who = view.holder ? `${view.holder}${ours ? ' (us)' : ''}` : '(nobody: released)';
    const state = !view.holder ? 'free' : live ? 'live' : 'expired';
    process.stdout.write(`virt-controller lease (${lease.namespace}): held by ${who}, ${state}, since ${view.acquiredAt ? new Date(view.acquiredAt).toISOString() : '?'} (${ago(view.acquiredAt, now)}), renewed ${ago(view.renewedAt, now)}, lease ${view.durationMs / 1000} s, ${view.transitions} transitions\n`);
    if (ours) {
      const detail = view.handingBack ? 'handing back: nothing writes' : mode === 'write' ? 'we write' : view.writableAfter && view.writableAfter > now ? `we write from ${new Date(view.writableAfter).toISOString()} (${ago(view.writableAfter, now)}), once the old leader has stopped` : 'not renewed within our renew deadline: nothing writes';
      process.stdout.write(`${detail}\n`);
    }
    return 0;
  },
};
