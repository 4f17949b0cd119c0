/**
 * Changed-block tracking, the VM controller's part (KubeVirt `pkg/storage/cbt/cbt.go`
 * `SetChangedBlockTrackingOnVMI`, `SyncVMChangedBlockTrackingState`; reference-node-side §1.9),
 * as pure functions: with the `IncrementalBackup` gate on, a VM matching the KubeVirt CR's
 * `changedBlockTrackingLabelSelectors` gets its VMI created with `changedBlockTracking.state:
 * Initializing` (virt-handler moves it to `Enabled` once the domain runs with its overlays), and
 * the VM's own state mirrors it (`PendingRestart` while a running VMI predates the selection…).
 * The namespace selector is not read (it needs the namespace's labels): only the VM selector selects.
 */
import type { VirtualMachine, VirtualMachineInstance } from '../../shared/api/index.ts';
import { gateEnabled, type ClusterConfig } from '../../shared/config/cluster-config.ts';
import { selectorMatches } from '../../shared/predicates/label-selector.ts';

type State = '' | 'Disabled' | 'PendingRestart' | 'Initializing' | 'Enabled' | 'IncrementalBackupFeatureGateDisabled';

const GATE = 'IncrementalBackup';
const stateOf = (s: { changedBlockTracking?: { state?: string } } | undefined): State => (s?.changedBlockTracking?.state ?? '') as State;
const disabled = (s: State) => s === '' || s === 'Disabled';
const on = (s: State) => s === 'Initializing' || s === 'Enabled';

function selected(vm: VirtualMachine, config: ClusterConfig): boolean {
  const sel = config.changedBlockTrackingSelectors.virtualMachineLabelSelector;
  return sel !== undefined && selectorMatches(sel, vm.metadata?.labels);
}

/** `SetChangedBlockTrackingOnVMI`: the state a new VMI of `vm` is created with, if any. */
export function cbtStateForNewVmi(vm: VirtualMachine, config: ClusterConfig): 'Initializing' | 'Disabled' | undefined {
  if (!gateEnabled(config, GATE)) return undefined;
  if (selected(vm, config)) return 'Initializing';
  return stateOf(vm.status) !== '' ? 'Disabled' : undefined;
}

/** `SyncVMChangedBlockTrackingState`: the VM's state after this pass (undefined = none at all). */
export function nextVmCbtState(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, config: ClusterConfig): State | undefined {
  const vmState = stateOf(vm.status);
  const vmiState = vmi ? stateOf(vmi.status) : '';
  const gate = gateEnabled(config, GATE);
  if (vmState === 'IncrementalBackupFeatureGateDisabled' && !gate) return vmState;
  const match = selected(vm, config);
  if (!gate) {
    if (!vmi || disabled(vmiState)) return match ? 'IncrementalBackupFeatureGateDisabled' : undefined;
    return on(vmState) ? 'PendingRestart' : vmState || undefined;
  }
  if (match) {
    if (!vmi) return vmState === 'Enabled' ? 'Enabled' : 'Initializing';
    switch (vmState) {
      case '':
      case 'IncrementalBackupFeatureGateDisabled':
        return 'PendingRestart';
      case 'PendingRestart':
      case 'Disabled':
        return vmiState === 'Initializing' || vmiState === 'Enabled' ? vmiState : 'PendingRestart';
      case 'Initializing':
      case 'Enabled':
        return vmiState === 'Enabled' ? 'Enabled' : 'Initializing';
    }
    return '';
  }
  if (disabled(vmState)) return vmState || undefined;
  if (!vmi || disabled(vmiState)) return 'Disabled';
  return 'PendingRestart';
}
