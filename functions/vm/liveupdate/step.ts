/**
 * The VM reconcile's live-update step (reference-vm-vmi-depth §5), after the run-strategy sync
 * while a VMI runs: `RestartRequired` from the start spec, then — under the LiveUpdate rollout
 * strategy, and only when no restart is pending — the CPU, affinity/nodeSelector, tolerations and
 * memory handlers, in KubeVirt's order, each patching the VMI spec. The VMI controller and the
 * workload updater take it from there (the `HotVCPUChange` / `HotMemoryChange` conditions, the
 * hotplug migration. (The `kubevirt.io/vm-generation` annotation's catch-up runs earlier in the
 * pass: ../generation-annotation.ts.)
 */
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceSpec, VirtualMachineSpec, VolumeUpdateState } from '../../../shared/api/index.ts';
import { VMIS } from '../../../shared/api/resources.ts';
import { isLiveUpdate } from '../../../shared/liveupdate/defaults.ts';
import type { ClusterConfig } from '../../../shared/config/cluster-config.ts';
import type { VmDeps } from '../deps.ts';
import { expandVmi } from '../instancetype/expand-vmi.ts';
import { resolvePinned } from '../instancetype/pinned.ts';
import type { Resolved } from '../instancetype/sync-step.ts';
import type { SyncError } from '../sync.ts';
import { vmiFromVm } from '../vmi-from-vm.ts';
import { VM_CONDITION, VM_GENERATION_ANNOTATION } from '../well-known.ts';
import type { LiveChange } from './change.ts';
import { cpuChange } from './cpu-hotplug.ts';
import { memoryChange } from './memory-hotplug.ts';
import { affinityChanges, tolerationsChange } from './placement.ts';
import { RESTART_REQUIRED_MESSAGE, restartRequired } from './restart-required.ts';
import { syncVolumeUpdate } from '../volume-migration/step.ts';
import { startSpecOf } from '../generation-annotation.ts';
import { errorText } from '../../../shared/errors.ts';

/** What the step leaves for the status write. */
export interface LiveUpdateResult {
  readonly vmi: VirtualMachineInstance;
  /**
   * `RestartRequired` after this pass: `clear` (no difference left), a message to set (the first
   * of this pass; an existing True one keeps its own), or undefined (no decision this pass).
   */
  readonly restartRequired?: { readonly kind: 'clear' } | { readonly kind: 'set'; readonly message: string };
  /** `status.volumeUpdateState` from the volume-update handler (volume-migration/); undefined: as read. */
  readonly volumeUpdateState?: VolumeUpdateState;
  readonly error?: SyncError;
}

/** The VM template spec as the VMI would get it: defaults of the start, instance type and preference applied. */
function expanded(vm: VirtualMachine, spec: VirtualMachineSpec, resolved: Resolved, config: ClusterConfig): VirtualMachineInstanceSpec | undefined {
  const r = expandVmi(vmiFromVm({ ...vm, spec }, resolved.preference?.spec, config), resolved);
  return r.ok ? r.vmi.spec : undefined;
}

const REASONS = {
  cpu: ['HotPlugCPUError', 'Error encountered while handling CPU change request: '],
  affinity: ['AffinityChangeError', ''],
  tolerations: ['TolerationsChangeError', ''],
  memory: ['HotPlugMemoryError', 'error encountered while handling memory hotplug requests: '],
} as const;

/**
 * Runs the step for the VM's live (not final, not deleting) VMI. `known.startSpec`: the start
 * spec when this pass has read it already (the generation annotation's sync, generation-annotation.ts).
 */
export async function syncLiveUpdate(
  vm: VirtualMachine,
  vmi: VirtualMachineInstance,
  resolved: Resolved,
  config: ClusterConfig,
  deps: VmDeps,
  known: { readonly startSpec?: VirtualMachineSpec | undefined } = {},
): Promise<LiveUpdateResult> {
  // The revision is named by generation and the generation moves with every spec change: at the
  // same generation the start spec is the VM's own spec, and no read is needed.
  // Likewise once the vm-generation annotation has caught up: it moves only while the template
  // equals the start revision's, and only the template is compared.
  // Not with matchers: the annotation follows the template only, so an instance type switched by
  // its matcher (the template unchanged) is seen in the start revision's pinned revisions alone.
  const matchers = vm.spec.instancetype !== undefined || vm.spec.preference !== undefined;
  const caughtUp = !matchers && vmi.metadata?.annotations?.[VM_GENERATION_ANNOTATION] === String(vm.metadata?.generation);
  const startSpec = caughtUp ? vm.spec : (known.startSpec ?? (await startSpecOf(vm, vmi, deps)));

  const current = expanded(vm, vm.spec, resolved, config);
  // The start spec with its own pinned revisions, the VM with its status refs (§1.7).
  const startResolved = startSpec && startSpec !== vm.spec ? await resolvePinned(startSpec, vm, resolved, deps) : resolved;
  const started = startSpec && startResolved ? expanded(vm, startSpec, startResolved, config) : undefined;
  const liveUpdate = isLiveUpdate(config);
  let restartNeeded = false;
  let restart: LiveUpdateResult['restartRequired'];
  if (current && started) {
    restartNeeded = restartRequired({ started, current, vmi, liveUpdate, volumesMigrate: vm.spec.updateVolumesStrategy === 'Migration' });
    restart = restartNeeded ? { kind: 'set', message: RESTART_REQUIRED_MESSAGE } : { kind: 'clear' };
  }
  // The handlers wait while a restart is pending. A condition this pass cleared does not count
  // (KubeVirt asks the VM as syncRestartRequired left it): a handler's own RestartRequired, e.g.
  // sockets above maxSockets, is cleared and set again each pass instead of flapping.
  const pending = restart === undefined && (vm.status?.conditions?.some((c) => c.type === VM_CONDITION.RestartRequired) ?? false);
  if (!liveUpdate || restartNeeded || pending || !current) return { vmi, restartRequired: restart };

  const now = deps.now();
  const handlers: [keyof typeof REASONS, () => LiveChange[]][] = [
    ['cpu', () => [cpuChange({ template: current, vmi, cpuAllocationRatio: config.cpuAllocationRatio, now })]],
    ['affinity', () => affinityChanges({ template: current, vmi, now })],
    ['tolerations', () => [tolerationsChange({ template: current, vmi, now })]],
    ['memory', () => [memoryChange({ template: current, vmi, now, defaultArchitecture: config.defaultArchitecture })]],
  ];
  let message: string | undefined;
  for (const [which, decide] of handlers) {
    const [reason, prefix] = REASONS[which];
    for (const change of decide()) {
      if (change.kind === 'restart') message ??= change.message;
      else if (change.kind === 'error') return { vmi, restartRequired: withMessage(restart, message), error: { reason, message: `${prefix}${change.message}`, requeue: true } };
      else if (change.kind === 'patch') {
        try {
          vmi = await deps.kube.patch(VMIS, vmi.metadata?.namespace ?? '', vmi.metadata?.name ?? '', { type: 'json', ops: change.ops });
        } catch (err) {
          return { vmi, restartRequired: withMessage(restart, message), error: { reason, message: `${prefix}${errorText(err)}`, requeue: true } };
        }
      }
    }
  }
  // The volume-update handler comes last (it reads claims, so it is not a pure decision).
  const volumes = await syncVolumeUpdate(vm, vmi, deps);
  message ??= volumes.restartMessage;
  const result = { vmi: volumes.vmi, restartRequired: withMessage(restart, message), ...(volumes.volumeUpdateState ? { volumeUpdateState: volumes.volumeUpdateState } : {}) };
  return volumes.error ? { ...result, error: volumes.error } : result;
}

/** A handler's RestartRequired comes after syncRestartRequired's clear, so it wins. */
function withMessage(restart: LiveUpdateResult['restartRequired'], message: string | undefined): LiveUpdateResult['restartRequired'] {
  return message === undefined ? restart : { kind: 'set', message };
}
