/**
 * Changed-block tracking's selection (functions/vm/cbt.ts against KubeVirt's
 * `vmMatchesChangedBlockTrackingSelectors`, `SetChangedBlockTrackingOnVMI`,
 * `SyncVMChangedBlockTrackingState`, `handleNamespaceUpdate`): the VM selector or the namespace
 * selector on the namespace's labels; and the relay wakes a namespace's VMs when its labels change.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeVirt, VirtualMachine } from '../../../shared/api/index.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';
import { cbtStateForNewVmi, needsNamespaceLabels, nextVmCbtState } from '../../../functions/vm/cbt.ts';
import { vmMapper } from '../../../functions/vm/wakes.ts';

const config = (selectors: Record<string, unknown>, gate = true) =>
  clusterConfigFromKubeVirt({ spec: { configuration: { developerConfiguration: { featureGates: gate ? ['IncrementalBackup'] : [] }, changedBlockTrackingLabelSelectors: selectors } } } as unknown as KubeVirt);
const vm = (labels: Record<string, string> = {}, state?: string): VirtualMachine => ({ metadata: { name: 'vm', namespace: 'ns', labels }, spec: { template: { spec: { domain: { devices: {} } } } }, ...(state && { status: { changedBlockTracking: { state } } }) }) as VirtualMachine;

const NS_SEL = { namespaceLabelSelector: { matchLabels: { backup: 'on' } } };
const VM_SEL = { virtualMachineLabelSelector: { matchLabels: { cbt: 'yes' } } };

describe('CBT selection by VM or namespace labels', () => {
  const rows: { name: string; selectors: Record<string, unknown>; vmLabels?: Record<string, string>; nsLabels?: Record<string, string>; gate?: boolean; vmState?: string; newVmi: string | undefined; vmNoVmi: string | undefined }[] = [
    { name: 'namespace selector matches the namespace labels', selectors: NS_SEL, nsLabels: { backup: 'on' }, newVmi: 'Initializing', vmNoVmi: 'Initializing' },
    { name: 'namespace selector, other namespace labels', selectors: NS_SEL, nsLabels: { backup: 'off' }, newVmi: undefined, vmNoVmi: undefined },
    { name: 'namespace selector, namespace unknown (KubeVirt: not in the informer → no match)', selectors: NS_SEL, newVmi: undefined, vmNoVmi: undefined },
    { name: 'VM selector alone', selectors: VM_SEL, vmLabels: { cbt: 'yes' }, newVmi: 'Initializing', vmNoVmi: 'Initializing' },
    { name: 'either selector suffices', selectors: { ...VM_SEL, ...NS_SEL }, vmLabels: { cbt: 'no' }, nsLabels: { backup: 'on' }, newVmi: 'Initializing', vmNoVmi: 'Initializing' },
    { name: 'no longer selected: a VM that had a state is Disabled', selectors: NS_SEL, nsLabels: {}, vmState: 'Enabled', newVmi: 'Disabled', vmNoVmi: 'Disabled' },
    { name: 'gate off, selected by namespace → IncrementalBackupFeatureGateDisabled', selectors: NS_SEL, nsLabels: { backup: 'on' }, gate: false, newVmi: undefined, vmNoVmi: 'IncrementalBackupFeatureGateDisabled' },
  ];
  for (const r of rows) {
    test(r.name, () => {
      // arrange
      const cfg = config(r.selectors, r.gate ?? true);
      const v = vm(r.vmLabels, r.vmState);
      // act
      const created = cbtStateForNewVmi(v, cfg, r.nsLabels);
      const synced = nextVmCbtState(v, undefined, cfg, r.nsLabels);
      // assert
      assert.equal(created, r.newVmi, 'the new VMI\'s state');
      assert.equal(synced, r.vmNoVmi, 'the VM\'s state with no VMI');
    });
  }

  test('the namespace is read only when a namespace selector is set', () => {
    // act + assert
    assert.equal(needsNamespaceLabels(config(VM_SEL)), false);
    assert.equal(needsNamespaceLabels(config(NS_SEL)), true);
  });
});

describe('a namespace\'s label change wakes its VMs', () => {
  test('only a MODIFIED namespace whose labels changed, and only the VMs in it', () => {
    // arrange
    const map = vmMapper();
    const ns = (labels: Record<string, string>) => ({ metadata: { name: 'ns', labels } });
    map('VirtualMachine', 'ADDED', { metadata: { name: 'a', namespace: 'ns' }, spec: {} });
    map('VirtualMachine', 'ADDED', { metadata: { name: 'b', namespace: 'other' }, spec: {} });
    // act
    const added = map('Namespace', 'ADDED', ns({ team: 'x' }));
    const same = map('Namespace', 'MODIFIED', ns({ team: 'x' }), ns({ team: 'x' }));
    const changed = map('Namespace', 'MODIFIED', ns({ team: 'x', backup: 'on' }), ns({ team: 'x' }));
    const unknownBefore = map('Namespace', 'MODIFIED', ns({ team: 'x' }));
    // assert
    assert.deepEqual(added, [], 'a new namespace wakes nothing (its VMs have their own events)');
    assert.deepEqual(same, [], 'a status or annotation change wakes nothing');
    assert.deepEqual(changed, [{ controller: 'vm', key: 'ns/a' }]);
    assert.deepEqual(unknownBefore, [{ controller: 'vm', key: 'ns/a' }], 'without the previous object, wake (a missed selection would never heal)');
  });
});
