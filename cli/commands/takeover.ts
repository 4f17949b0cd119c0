/**
 * `virt-reconciler takeover`: writes our identity into virt-controller's Lease (docs/cutover.md).
 * The live virt-controller fails its next renewal and stops within its renew deadline; nothing of
 * ours writes until the old holder's lease duration plus a margin has passed. The running relay
 * (`up`, `up --shadow`, or the relay's Deployment) renews the Lease from then on: this command
 * waits one lease duration to see it renewed, and says so when nothing does (the Lease then
 * lapses and a standby virt-controller takes it back: safe, but no takeover).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseFlags, CliError, type Command } from '../command.ts';
import { ago, LEASE_FLAGS, LEASE_HELP, leaseClientFor } from '../lease-flags.ts';

const HELP = `usage: virt-reconciler takeover [flags]

Takes virt-controller's Lease from the live virt-controller; our functions write once its renew
deadline has certainly passed. Start our relay first ('up --shadow' or the deployment in shadow mode).

${LEASE_HELP}
  --no-wait             do not wait to see the relay renew the Lease`;

export const command: Command = {
  async run(argv) {
    const { values } = parseFlags(argv, { ...LEASE_FLAGS, 'no-wait': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
    if (values.help) {
      process.stdout.write(HELP + '\n');
      return 0;
    }
    const lease = leaseClientFor(values);
    const r = await lease.acquire({ force: true });
    if (!r.acquired) throw new CliError(`could not write the Lease: ${r.holder} wrote it at the same time; run takeover again`, 1);
    const now = Date.now();
    process.stdout.write(`took virt-controller's Lease (${lease.namespace}) from ${r.previous ?? 'nobody'} as ${lease.identity}; we write from ${new Date(r.writableAfter).toISOString()} (${ago(r.writableAfter, now)})\n`);
    if (values['no-wait']) return 0;
    const written = (await lease.read()).view.renewedAt ?? now;
    const deadline = now + lease.timings.leaseDurationSeconds * 1000;
    while (Date.now() < deadline) {
      await sleep(500);
      const { view } = await lease.read();
      if (view.holder !== lease.identity) throw new CliError(`${view.holder ?? 'nobody'} holds the Lease again: a standby took it back`, 1);
      if ((view.renewedAt ?? 0) > written) {
        process.stdout.write(`renewed by our relay ${ago(view.renewedAt, Date.now())}: the takeover holds ('virt-reconciler status' to watch)\n`);
        return 0;
      }
    }
    throw new CliError(`nothing renewed the Lease within ${lease.timings.leaseDurationSeconds} s: start our relay ('up --shadow' or the deployment) and run takeover again; the Lease lapses and a standby virt-controller takes it back`, 1);
  },
};
