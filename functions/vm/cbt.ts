/**
 * Changed-block tracking, the VM controller's part (KubeVirt `pkg/storage/cbt/cbt.go`
 * `SetChangedBlockTrackingOnVMI`, `SyncVMChangedBlockTrackingState`; reference-node-side §1.9),
 * as pure functions: with the `IncrementalBackup` gate on, a VM matching the KubeVirt CR's
 * `changedBlockTrackingLabelSelectors` gets its VMI created with `changedBlockTracking.state:
 * Initializing` (virt-handler moves it to `Enabled` once the domain runs with its overlays), and
 * the VM's own state mirrors it (`PendingRestart` while a running VMI predates the selection…).
 * A VM is selected by the VM selector or by its namespace's labels matching the namespace
 * selector (`vmMatchesChangedBlockTrackingSelectors`); the reconcile reads the namespace only when
 * a namespace selector is set ({@link needsNamespaceLabels}).
 */
import type { VirtualMachine, VirtualMachineInstance } from '../../shared/api/index.ts';
import { gateEnabled, type ClusterConfig } from '../../shared/config/cluster-config.ts';
import { selectorMatches } from '../../shared/predicates/label-selector.ts';

type State = '' | 'Disabled' | 'PendingRestart' | 'Initializing' | 'Enabled' | 'IncrementalBackupFeatureGateDisabled';

const GATE = 'IncrementalBackup';
const stateOf = (s: { changedBlockTracking?: { state?: string } } | undefined): State => (s?.changedBlockTracking?.state ?? '') as State;
const disabled = (s: State) => s === '' || s === 'Disabled';
const on = (s: State) => s === 'Initializing' || s === 'Enabled';

/** True when the CBT selection depends on the VM's namespace labels (a namespace selector is set). */
export function needsNamespaceLabels(config: ClusterConfig): boolean {
  return config.changedBlockTrackingSelectors.namespaceLabelSelector !== undefined;
}

/**
 * The VM selector matches its labels, or the namespace selector its namespace's labels
 * (`namespaceLabels` undefined: the namespace is unknown, which KubeVirt counts as no match).
 */
function selected(vm: VirtualMachine, config: ClusterConfig, namespaceLabels: Record<string, string> | undefined): boolean {
  const { virtualMachineLabelSelector: vmSel, namespaceLabelSelector: nsSel } = config.changedBlockTrackingSelectors;
  if (vmSel !== undefined && selectorMatches(vmSel, vm.metadata?.labels)) return true;
  return nsSel !== undefined && namespaceLabels !== undefined && selectorMatches(nsSel, namespaceLabels);
}

/** `SetChangedBlockTrackingOnVMI`: the state a new VMI of `vm` is created with, if any. */
export function cbtStateForNewVmi(vm: VirtualMachine, config: ClusterConfig, namespaceLabels?: Record<string, string>): 'Initializing' | 'Disabled' | undefined {
  if (!gateEnabled(config, GATE)) return undefined;
  if (selected(vm, config, namespaceLabels)) return 'Initializing';
  return stateOf(vm.status) !== '' ? 'Disabled' : undefined;
}

/** `SyncVMChangedBlockTrackingState`: the VM's state after this pass (undefined = none at all). */
export function nextVmCbtState(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, config: ClusterConfig, namespaceLabels?: Record<string, string>): State | undefined {
  const vmState = stateOf(vm.status);
  const vmiState = vmi ? stateOf(vmi.status) : '';
  const gate = gateEnabled(config, GATE);
  if (vmState === 'IncrementalBackupFeatureGateDisabled' && !gate) return vmState;
  const match = selected(vm, config, namespaceLabels);
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
