/**
 * Selection policies (reference §2.3, §2.5): which VMs a scale-in, an autoheal or a proactive
 * update considers, and in what order. Selectors look at what the VM will run: `labelSelector` at
 * its VMI template's labels (`spec.template.metadata.labels`), `nodeSelectorRequirementMatcher`
 * at its VMI template's `nodeSelector`; both must match when both are given. Pure; the `Random`
 * order draws from the `random` passed in.
 */
import type { VirtualMachine, VirtualMachinePoolSelectionPolicy, VirtualMachinePoolSelectors } from '../../shared/api/index.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import { selectorMatches, validateSelector } from '../../shared/predicates/label-selector.ts';
import { indexOf } from './names.ts';

/** The sort policies; absent means `Random`. */
export type SortPolicy = 'AscendingOrder' | 'DescendingOrder' | 'Newest' | 'Oldest' | 'Random';

const SORTS: readonly SortPolicy[] = ['AscendingOrder', 'DescendingOrder', 'Newest', 'Oldest', 'Random'];

/** The sort policy named, `Random` when absent; `unknown: true` when the name is not one (upstream warns and shuffles). */
export function sortPolicyOf(policy: VirtualMachinePoolSelectionPolicy | undefined): { sort: SortPolicy; unknown: boolean } {
  const name = policy?.sortPolicy;
  if (name === undefined || name === '') return { sort: 'Random', unknown: false };
  return SORTS.includes(name as SortPolicy) ? { sort: name as SortPolicy, unknown: false } : { sort: 'Random', unknown: true };
}

function created(vm: VirtualMachine): number {
  const t = Date.parse(String(vm.metadata?.creationTimestamp ?? ''));
  return Number.isNaN(t) ? 0 : t;
}

/** `vms` in `sort` order (a new array). `random` ∈ [0, 1) drives the shuffle. */
export function sortVms(vms: readonly VirtualMachine[], sort: SortPolicy, random: () => number): VirtualMachine[] {
  const out = [...vms];
  const idx = (vm: VirtualMachine) => indexOf(vm.metadata?.name ?? '');
  switch (sort) {
    case 'AscendingOrder':
      return out.sort((a, b) => idx(a) - idx(b));
    case 'DescendingOrder':
      return out.sort((a, b) => idx(b) - idx(a));
    case 'Newest':
      return out.sort((a, b) => created(b) - created(a));
    case 'Oldest':
      return out.sort((a, b) => created(a) - created(b));
    case 'Random':
      // Fisher–Yates.
      for (let i = out.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
  }
}

/** One node selector requirement of `nodeSelectorRequirementMatcher`. */
interface NodeRequirement {
  readonly key: string;
  readonly operator: string;
  readonly values?: readonly string[] | undefined;
}

/**
 * True when `nodeSelector` satisfies a node selector requirement converted to a label selector:
 * In, NotIn, Exists, DoesNotExist as label selectors judge them, Gt and Lt comparing integers
 * (an absent key or a non-integer never satisfies them). Another operator is an error.
 */
function matchesNodeRequirement(r: NodeRequirement, nodeSelector: Readonly<Record<string, string>> | undefined): boolean {
  if (r.operator === 'Gt' || r.operator === 'Lt') {
    const bound = r.values?.length === 1 ? Number(r.values[0]) : NaN;
    if (!Number.isInteger(bound)) throw new InvalidInputError('nodeSelectorRequirementMatcher', `for 'Gt', 'Lt' operators, exactly one integer value is required`);
    const v = nodeSelector?.[r.key];
    if (v === undefined || !/^-?\d+$/.test(v)) return false;
    return r.operator === 'Gt' ? Number(v) > bound : Number(v) < bound;
  }
  const sel = { matchExpressions: [{ key: r.key, operator: r.operator, values: [...(r.values ?? [])] }] };
  validateSelector(sel, 'nodeSelectorRequirementMatcher');
  return selectorMatches(sel, nodeSelector);
}

/**
 * True when `vm` matches `selectors`. Throws InvalidInputError for an unparsable selector or a
 * node selector requirement with another operator than In, NotIn, Exists, DoesNotExist, Gt, Lt.
 */
export function matchesSelectors(vm: VirtualMachine, selectors: VirtualMachinePoolSelectors): boolean {
  if (selectors.labelSelector) {
    validateSelector(selectors.labelSelector, 'selectors.labelSelector');
    if (!selectorMatches(selectors.labelSelector, vm.spec.template?.metadata?.labels)) return false;
  }
  return (selectors.nodeSelectorRequirementMatcher ?? []).every((r) => matchesNodeRequirement(r, vm.spec.template?.spec?.nodeSelector));
}

/** `vms` that match the policy's selectors (all of them when it has none). */
export function selectVms(vms: readonly VirtualMachine[], policy: VirtualMachinePoolSelectionPolicy | undefined): VirtualMachine[] {
  const selectors = policy?.selectors;
  return selectors ? vms.filter((vm) => matchesSelectors(vm, selectors)) : [...vms];
}
