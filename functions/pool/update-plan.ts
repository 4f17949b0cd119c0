/**
 * The update of a pool whose scale is stable (reference §2.5), decided without I/O: which VMs are
 * outdated (re-rendered opportunistically, always), and, unless the strategy is opportunistic,
 * what to do to each up-to-date VM's VMI (proactive): restart it, delete the VM, or just relabel
 * the VMI — VMs not Ready first (not counted against the budget), then the others within
 * `maxUnavailable`. When the budget runs out the pool looks again in 3 seconds.
 */
import type { V1ControllerRevision } from '@kubernetes/client-node';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachinePool } from '../../shared/api/index.ts';
import { isDeleting } from './delete-selection.ts';
import { revisionOf, revisionSpec, semanticallyEqual } from './revisions.ts';
import { selectVms, sortPolicyOf, sortVms } from './selection-policy.ts';

/** What a proactive update does to one VM's VMI. */
export type VmiUpdate = 'none' | 'restart' | 'vm-delete' | 'label-patch';

/** An action on one VM (and its VMI). */
export interface VmiAction {
  readonly vm: VirtualMachine;
  readonly vmi: VirtualMachineInstance;
  readonly action: VmiUpdate;
}

/**
 * `maxUnavailable` as a number of VMs: a percentage of `replicas` rounded down, or the integer,
 * at least 1. Throws for a string that is not `<n>%`.
 */
export function maxUnavailableOf(value: string | number | undefined, replicas: number): number {
  const v = value ?? '100%';
  let n: number;
  if (typeof v === 'number') n = v;
  else {
    const m = /^(\d+)%$/.exec(v);
    if (!m) throw new Error(`invalid maxUnavailable percentage: invalid value for IntOrString: invalid type: string is not a percentage`);
    n = Math.floor((replicas * Number(m[1])) / 100);
  }
  return Math.max(1, n);
}

function readyCondition(obj: { status?: { conditions?: readonly { type: string; status: string }[] } | undefined }): string | undefined {
  return obj.status?.conditions?.find((c) => c.type === 'Ready')?.status;
}

/** A VM is unavailable when its VMI is missing, deleting, not Running, or not Ready. */
export function isUnavailable(vmi: VirtualMachineInstance | undefined): boolean {
  return vmi === undefined || isDeleting(vmi) || vmi.status?.phase !== 'Running' || readyCondition(vmi) !== 'True';
}

/** True when the VM's own Ready condition (its status, written by the VM controller) is True. */
export function isVmReady(vm: VirtualMachine): boolean {
  return readyCondition(vm) === 'True';
}

/** How the VMI must change to catch up with its VM's revision. */
export function classify(vm: VirtualMachine, vmi: VirtualMachineInstance, revisions: ReadonlyMap<string, V1ControllerRevision>): VmiUpdate {
  const vmRev = revisionOf(vm);
  if (vmRev === undefined) return 'none';
  const vmiRev = revisionOf(vmi);
  if (vmiRev === undefined) return 'restart';
  if (vmiRev === vmRev) return 'none';
  const want = revisions.get(vmRev);
  const wantSpec = want ? revisionSpec(want) : undefined;
  if (!wantSpec) return 'none';
  const have = revisions.get(vmiRev);
  const haveSpec = have ? revisionSpec(have) : undefined;
  if (!haveSpec) return 'restart';
  if (!semanticallyEqual(haveSpec.virtualMachineTemplate?.spec?.dataVolumeTemplates, wantSpec.virtualMachineTemplate?.spec?.dataVolumeTemplates)) return 'vm-delete';
  if (!semanticallyEqual(haveSpec.virtualMachineTemplate?.spec?.template, wantSpec.virtualMachineTemplate?.spec?.template)) return 'restart';
  return 'label-patch';
}

/** The proactive plan: VMIs of not-Ready VMs first (unbudgeted), then as many as the budget allows. */
export interface ProactivePlan {
  /** VMs not Ready whose VMI lives: acted on regardless of the budget (`none` included: upstream reports it too). */
  readonly unhealthy: readonly VmiAction[];
  /** Budgeted actions, in the update's sort order. */
  readonly budgeted: readonly VmiAction[];
  /** The budget ran out with the walk unfinished: look again in 3 seconds. */
  readonly budgetExhausted: boolean;
}

/**
 * Plans the proactive update of the up-to-date VMs `current` (VMIs by name). `replicas` sizes a
 * percentage `maxUnavailable`. Throws for an invalid `maxUnavailable`.
 */
export function planProactive(pool: VirtualMachinePool, current: readonly VirtualMachine[], vmis: ReadonlyMap<string, VirtualMachineInstance>, revisions: ReadonlyMap<string, V1ControllerRevision>, replicas: number, random: () => number): ProactivePlan {
  const vmiOf = (vm: VirtualMachine) => vmis.get(vm.metadata?.name ?? '');
  const unhealthy: VmiAction[] = [];
  for (const vm of current) {
    const vmi = vmiOf(vm);
    if (isVmReady(vm) || !vmi || isDeleting(vmi)) continue;
    unhealthy.push({ vm, vmi, action: classify(vm, vmi, revisions) });
  }
  const max = maxUnavailableOf(pool.spec.maxUnavailable, replicas);
  // A VMI restarted in the unhealthy step is unavailable from now on even if its VM's Ready
  // condition merely lagged behind a Ready VMI: count it, so the budget is never overrun.
  const handled = new Set(unhealthy.filter((a) => a.action !== 'none').map((a) => a.vm.metadata?.name));
  let budget = max - current.filter((vm) => isUnavailable(vmiOf(vm)) || handled.has(vm.metadata?.name)).length;
  const proactive = pool.spec.updateStrategy?.proactive;
  const ordered = proactive ? sortVms(current, sortPolicyOf(proactive.selectionPolicy).sort, random) : [...current];
  const budgeted: VmiAction[] = [];
  for (const vm of ordered) {
    if (budget <= 0) return { unhealthy, budgeted, budgetExhausted: true };
    const vmi = vmiOf(vm);
    if (!vmi || handled.has(vm.metadata?.name)) continue;
    const action = classify(vm, vmi, revisions);
    if (action === 'none') continue;
    budgeted.push({ vm, vmi, action });
    budget--;
  }
  return { unhealthy, budgeted, budgetExhausted: false };
}

/** The update's working set: the kept VMs, narrowed by the proactive update's selectors. Throws for an invalid selector. */
export function updateWorkingSet(pool: VirtualMachinePool, vms: readonly VirtualMachine[]): VirtualMachine[] {
  return selectVms(vms, pool.spec.updateStrategy?.proactive?.selectionPolicy);
}
