/**
 * The VM controller's instance type step (KubeVirt's instancetype controller `Sync`,
 * reference-vm-vmi-depth.md §1.1–§1.4, §1.6), run after the run strategy is known and
 * before DataVolumes: infer from a volume (the webhook's part, see infer.ts) → find both
 * matchers → under the `reference` policy store (pin revisions, write the status refs) → upgrade
 * old revisions; under `expand` / `expandAll` the expansion into the VM (expand-step.ts). What it
 * resolved is handed to the start, which expands it into the VMI (expand-vmi.ts).
 */
import type { V1ControllerRevision } from '@kubernetes/client-node';
import type { InstancetypeStatusRef, VirtualMachine, VirtualMachineInstancetypeSpec } from '../../../shared/api/index.ts';
import { CONTROLLER_REVISIONS, VMS } from '../../../shared/api/resources.ts';
import { applyInstancetype, vmConflictMessage } from '../../../shared/instancetype/apply-instancetype.ts';
import {
  DEFAULT_INSTANCETYPE_KIND_LABEL,
  DEFAULT_INSTANCETYPE_LABEL,
  DEFAULT_PREFERENCE_KIND_LABEL,
  DEFAULT_PREFERENCE_LABEL,
  IGNORE_INFER_FAILURE,
} from '../../../shared/instancetype/well-known.ts';
import type { JsonPatchOperation } from '../../../shared/kube/client.ts';
import { AlreadyExistsError } from '../../../shared/kube/errors.ts';
import type { ClusterConfig } from '../../../shared/config/cluster-config.ts';
import type { VmDeps } from '../deps.ts';
import { expandIntoVm } from './expand-step.ts';
import type { SyncError } from '../sync.ts';
import { inferFromVolume } from './infer.ts';
import { kindTarget, type Flavour } from '../../../shared/instancetype/kinds.ts';
import { buildRevision, decodeRevision, needsUpgrade, sameSpec, type Revision } from '../../../shared/instancetype/revision.ts';
import { FindError, findFlavour, findLiveFlavour, FLAVOURS, REF_FIELD, resolvedOf, type Found } from '../../../shared/instancetype/find.ts';
import { nextStatusRef } from './store.ts';
import { errorText } from '../../../shared/errors.ts';

export type { Resolved, ResolvedFlavour } from '../../../shared/instancetype/find.ts';
export { REF_FIELD } from '../../../shared/instancetype/find.ts';
import type { Resolved } from '../../../shared/instancetype/find.ts';

export type InstancetypeSyncResult =
  | { readonly kind: 'ok'; readonly vm: VirtualMachine; readonly resolved: Resolved }
  /** The spec was rewritten (inference, or an expansion): the rest of this pass is skipped, as upstream does. */
  | { readonly kind: 'spec-changed'; readonly vm: VirtualMachine }
  /** `event`: the message of a `Warning FailedCreate` event to record (store and upgrade failures; find failures have none). */
  | { readonly kind: 'error'; readonly vm: VirtualMachine; readonly error: SyncError; readonly event?: string };

const FIND_REASON = { instancetype: 'FailedFindInstancetype', preference: 'FailedFindPreference' } as const;
const INFER_LABELS = {
  instancetype: [DEFAULT_INSTANCETYPE_LABEL, DEFAULT_INSTANCETYPE_KIND_LABEL],
  preference: [DEFAULT_PREFERENCE_LABEL, DEFAULT_PREFERENCE_KIND_LABEL],
} as const;

const STORE_PREFIX = 'error encountered while storing instancetype.kubevirt.io controllerRevisions';
const UPGRADE_PREFIX = 'error encountered while upgrading instancetype.kubevirt.io controllerRevisions';

/**
 * Runs the step for `vm` (not being deleted, with a valid run strategy). Under the `expand` /
 * `expandAll` reference policies (`config`) find is followed by the expansion into the VM
 * (expand-step.ts) instead of store and upgrade.
 */
export async function syncInstancetypes(vmIn: VirtualMachine, deps: VmDeps, config: ClusterConfig): Promise<InstancetypeSyncResult> {
  let vm = vmIn;
  if (!vm.spec.instancetype && !vm.spec.preference) return { kind: 'ok', vm, resolved: {} };

  // infer (the webhook's part)
  const inferred = await inferMatchers(vm, deps);
  if (inferred.kind !== 'ok') return inferred;

  // find
  const found: Partial<Record<Flavour, Found>> = {};
  for (const f of FLAVOURS) {
    const matcher = vm.spec[f];
    if (!matcher) continue;
    try {
      found[f] = await findFlavour(deps.kube, f, matcher, vm.status?.[REF_FIELD[f]], vm);
    } catch (err) {
      if (!(err instanceof FindError)) throw err;
      return { kind: 'error', vm, error: { reason: FIND_REASON[f], message: err.message, requeue: true } };
    }
  }

  const policy = config.instancetypeReferencePolicy;
  if (policy !== 'reference') return expandIntoVm(vm, resolvedOf(vm, found), policy, config, deps);

  // store
  try {
    vm = await store(vm, found, deps);
  } catch (err) {
    return failed(vm, STORE_PREFIX, err);
  }

  // upgrade
  try {
    vm = await upgrade(vm, found, deps);
  } catch (err) {
    return failed(vm, UPGRADE_PREFIX, err);
  }

  return { kind: 'ok', vm, resolved: resolvedOf(vm, found) };
}

function failed(vm: VirtualMachine, prefix: string, err: unknown): InstancetypeSyncResult {
  const message = `${prefix}: ${errorText(err)}`;
  return { kind: 'error', vm, error: { reason: 'FailedCreate', message, requeue: true }, event: message };
}

/**
 * Replaces each `inferFromVolume` matcher with the `{name, kind}` its volume names, as the
 * mutating webhook would have at admission. With `IgnoreInferFromVolumeFailure` an ignorable
 * failure drops the matcher, and a successful instance type inference drops the template's
 * `domain.memory` (the instance type provides it).
 */
async function inferMatchers(vm: VirtualMachine, deps: VmDeps): Promise<InstancetypeSyncResult> {
  const ops: JsonPatchOperation[] = [];
  let dropMemory = false;
  for (const f of FLAVOURS) {
    const matcher = vm.spec[f];
    if (!matcher?.inferFromVolume) continue;
    const ignore = matcher.inferFromVolumeFailurePolicy === IGNORE_INFER_FAILURE;
    const [nameLabel, kindLabel] = INFER_LABELS[f];
    const r = await inferFromVolume(deps.kube, vm, matcher.inferFromVolume, nameLabel, kindLabel);
    ops.push({ op: 'test', path: `/spec/${f}`, value: matcher });
    if (!r.ok) {
      if (!(r.ignorable && ignore)) return { kind: 'error', vm, error: { reason: FIND_REASON[f], message: r.message, requeue: true } };
      ops.push({ op: 'remove', path: `/spec/${f}` });
      continue;
    }
    const target = kindTarget(f, r.kind);
    ops.push({ op: 'replace', path: `/spec/${f}`, value: { name: r.name, kind: target.ok ? target.kind : r.kind } });
    if (ignore && f === 'instancetype') dropMemory = true;
  }
  if (ops.length === 0) return { kind: 'ok', vm, resolved: {} };
  const memory = vm.spec.template.spec?.domain.memory;
  if (dropMemory && memory !== undefined) ops.push({ op: 'test', path: '/spec/template/spec/domain/memory', value: memory }, { op: 'remove', path: '/spec/template/spec/domain/memory' });
  const written = await deps.kube.patch(VMS, vm.metadata?.namespace ?? '', vm.metadata?.name ?? '', { type: 'json', ops });
  return { kind: 'spec-changed', vm: written };
}

/**
 * Pins a revision for each matcher that has none (creating it from the live object; an instance
 * type is first checked against the template), then writes the changed refs in one status patch.
 * Never writes `spec.*.revisionName`: that stays the user's.
 */
async function store(vm: VirtualMachine, found: Partial<Record<Flavour, Found>>, deps: VmDeps): Promise<VirtualMachine> {
  const ops: JsonPatchOperation[] = [];
  const refs: Partial<Record<'instancetypeRef' | 'preferenceRef', InstancetypeStatusRef>> = {};
  for (const f of FLAVOURS) {
    const matcher = vm.spec[f];
    const hit = found[f];
    if (!matcher || !hit) continue;
    const field = REF_FIELD[f];
    const next = nextStatusRef({ ...matcher, kind: hit.kind }, vm.status?.[field]);
    const ref = next.ref;
    if (next.needsRevision) {
      const live = hit.live ? hit : await findLiveFlavour(deps.kube, f, matcher, vm).catch((err: unknown) => {
        throw err instanceof FindError ? new Error(err.message) : err;
      });
      if (f === 'instancetype') {
        const template = vm.spec.template;
        const checked = applyInstancetype('spec.template.spec', live.object.spec as VirtualMachineInstancetypeSpec, undefined, template.spec ?? { domain: { devices: {} } }, template.metadata?.annotations ?? {});
        if (checked.conflicts.length > 0) throw new Error(vmConflictMessage(checked.conflicts));
      }
      const cr = await createRevision(buildRevision(vm, live.object, hit.kind), f, deps);
      ref.controllerRevisionRef = { name: cr.metadata?.name ?? '' };
      found[f] = { ...hit, object: live.object, revision: cr };
    }
    if (JSON.stringify(ref) !== JSON.stringify(vm.status?.[field])) {
      refs[field] = ref;
      ops.push({ op: 'add', path: `/status/${field}`, value: ref });
    }
  }
  if (ops.length === 0) return vm;
  // A VM never written by a controller has no status: add it whole, guarded by the version read.
  const patch: JsonPatchOperation[] = vm.status === undefined ? [{ op: 'test', path: '/metadata/resourceVersion', value: vm.metadata?.resourceVersion }, { op: 'add', path: '/status', value: refs }] : ops;
  const written = await deps.kube.patch(VMS, vm.metadata?.namespace ?? '', vm.metadata?.name ?? '', { type: 'json', ops: patch }, { subresource: 'status' });
  return { ...vm, metadata: written.metadata, status: written.status };
}

/** Creates `cr`; one of the same name holding the same spec is reused, a different one is an error. */
async function createRevision(cr: Revision, f: Flavour, deps: VmDeps): Promise<V1ControllerRevision> {
  try {
    return await deps.kube.create(CONTROLLER_REVISIONS, cr);
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
    const existing = await deps.kube.get(CONTROLLER_REVISIONS, cr.metadata.namespace ?? '', cr.metadata.name);
    if (existing && sameSpec(existing, cr, f)) return existing;
    throw new Error(`found existing ControllerRevision with unexpected data: ${cr.metadata.name}`);
  }
}

/**
 * Rewrites each pinned revision that is not v1beta1 as a v1beta1 one, moves the status ref to it
 * (one status patch, `test` old name + `replace` new), then deletes the old one (a failed delete
 * is only logged).
 */
async function upgrade(vm: VirtualMachine, found: Partial<Record<Flavour, Found>>, deps: VmDeps): Promise<VirtualMachine> {
  const ops: JsonPatchOperation[] = [];
  const old: string[] = [];
  for (const f of FLAVOURS) {
    const field = REF_FIELD[f];
    const name = vm.status?.[field]?.controllerRevisionRef?.name;
    const cr = found[f]?.revision;
    if (!name || !cr || cr.metadata?.name !== name || !needsUpgrade(cr)) continue;
    const decoded = decodeRevision(cr, f);
    if (!decoded.ok) throw new Error(decoded.message);
    const created = await createRevision(buildRevision(vm, decoded.object, decoded.kind), f, deps);
    const path = `/status/${field}/controllerRevisionRef/name`;
    ops.push({ op: 'test', path, value: name }, { op: 'replace', path, value: created.metadata?.name ?? '' });
    old.push(name);
  }
  if (ops.length === 0) return vm;
  const written = await deps.kube.patch(VMS, vm.metadata?.namespace ?? '', vm.metadata?.name ?? '', { type: 'json', ops }, { subresource: 'status' });
  for (const name of old) {
    try {
      await deps.kube.delete(CONTROLLER_REVISIONS, vm.metadata?.namespace ?? '', name);
    } catch (err) {
      deps.log.warn('could not delete the upgraded ControllerRevision', { name, error: errorText(err) });
    }
  }
  return { ...vm, metadata: written.metadata, status: written.status };
}
