/**
 * The soak's rig with its cluster in a process of its own (rig.ts, startRigApart): the product's
 * parts in this process drive a VMI to Running against the child's emulator under the emulator's
 * faults, reached over the channel, and the child's audit log is drained here for the invariants.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PODS, VMIS } from '../../shared/api/resources.ts';
import { REAL } from '../support/lanes.ts';
import { vmiManifest } from '../e2e/support.ts';
import { launcherOf, OverLimit } from './audit-invariants.ts';
import { startRigApart } from './rig.ts';
import { NS, within } from './scenario-support.ts';

test('a rig with its cluster apart: a VMI Running under the emulator\'s faults, the audit log drained here, the cluster\'s memory its own', { skip: REAL ? 'the cluster apart runs the emulator lane only' : false }, async () => {
  // arrange
  const rig = await startRigApart({ seed: 5, controllers: ['vmi'] });
  try {
    await rig.start();
    // act
    await rig.user.create(VMIS, vmiManifest('apart-vmi'));
    const running = await within(120_000, async () => (await rig.user.get(VMIS, NS, 'apart-vmi'))?.status?.phase === 'Running');
    // Faults keep coming until some have been injected (the loop picks one every 0.3–1 s).
    await within(30_000, async () => Object.values(rig.injected()).reduce((a, n) => a + n, 0) > 3);
    await rig.calm();
    const audit = await rig.cluster.drainAudit();
    const heap = await rig.cluster.heapBytes?.();
    const injected = rig.injected();

    // assert
    assert.ok(running, 'the VMI reached Running');
    assert.equal(rig.cluster.placement, 'child process');
    assert.ok(audit.some((e) => e.verb === 'create' && e.resource === PODS.plural && launcherOf(e.object as Parameters<typeof launcherOf>[0]) !== undefined), 'the launcher pod\'s create is in the drained log');
    assert.deepEqual(new OverLimit('pods', launcherOf).feed(audit), [], 'one launcher pod for the VMI');
    assert.ok(heap !== undefined && heap > 0, 'the cluster\'s process reports its own heap');
    const emulatorFaults = (injected.watchDrops ?? 0) + (injected.watch410 ?? 0) + (injected.http429 ?? 0) + (injected.http500 ?? 0) + (injected.http409 ?? 0) + (injected.relayListErrors ?? 0);
    assert.ok(emulatorFaults > 0, `the emulator's faults reached the child: ${JSON.stringify(injected)}`);
  } finally {
    await rig.stop();
  }
});
