/**
 * Names the VM controller uses that shared/api/well-known.ts does not carry (yet). Spellings are
 * KubeVirt's own (`pkg/virt-controller/watch/vm/vm.go`, `staging/src/kubevirt.io/api/core/v1`).
 */
export { ALLOW_CLAIM_ADOPTION_ANNOTATION } from '../../shared/api/well-known.ts';

/** VMI annotation: the VM generation the VMI was started from (`status.observedGeneration`). */
export const VM_GENERATION_ANNOTATION = 'kubevirt.io/vm-generation';
/** VM annotation: `"false"` defers DataVolume creation until the VM starts. */
export const IMMEDIATE_DV_CREATION_ANNOTATION = 'kubevirt.io/immediate-data-volume-creation';
/** The finalizer the garbage collector's orphan deletion puts on a VM. */
export const ORPHAN_FINALIZER = 'orphan';
export const CDI_API_VERSION = 'cdi.kubevirt.io/v1beta1';

/** VM condition types the controller owns (the rest are copied from the VMI). */
export const VM_CONDITION = {
  Ready: 'Ready',
  Failure: 'Failure',
  RestartRequired: 'RestartRequired',
  ManualRecoveryRequired: 'ManualRecoveryRequired',
} as const;

/** `status.stateChangeRequests[].action` values. */
export const START_REQUEST = 'Start';
export const STOP_REQUEST = 'Stop';

/** Run strategies (`spec.runStrategy`). */
export const RUN_STRATEGIES = ['Always', 'RerunOnFailure', 'Manual', 'Halted', 'Once', 'WaitAsReceiver'] as const;
export type RunStrategy = (typeof RUN_STRATEGIES)[number];

/**
 * The ControllerRevision a VMI is started from: `revision-start-vm-<vmUID>-<generation>`, holding
 * `{"spec": <VM spec>}`; the VMI names it in `status.virtualMachineRevisionName` (an online
 * snapshot takes the spec the VMI runs from it).
 */
export const startRevisionName = (vmUid: string, generation: number) => `revision-start-vm-${vmUid}-${generation}`;

/**
 * VMI annotations virt-handler sets on a VMI whose PCI topology it detected as a later version
 * (the frozen placeholder slot count); the VM controller copies them into the VM template so the
 * VM's next VMIs keep that topology (reference-vm-vmi-depth §7).
 */
export const PCI_TOPOLOGY_VERSION_ANNOTATION = 'kubevirt.io/pci-topology-version';
export const PCI_INTERFACE_SLOT_COUNT_ANNOTATION = 'kubevirt.io/pci-interface-slot-count';
