/**
 * The instance type step under the `expand` / `expandAll` reference policies (KubeVirt's
 * `handleExpand`, reference-vm-vmi-depth.md §1.6), in place of store and upgrade: the VM's
 * spec is rewritten with its instance type and preference expanded (expand-vm.ts), its status refs
 * dropped, and the revisions they pinned deleted. `expand` leaves a VM alone once either status
 * ref pins a revision (it was admitted under `reference`); `expandAll` expands it anyway.
 */
import { isDeepStrictEqual } from 'node:util';
import type { VirtualMachine } from '../../../shared/api/index.ts';
import { CONTROLLER_REVISIONS, VMS } from '../../../shared/api/resources.ts';
import type { JsonPatchOperation } from '../../../shared/kube/client.ts';
import type { ClusterConfig, InstancetypeReferencePolicy } from '../../../shared/config/cluster-config.ts';
import type { VmDeps } from '../deps.ts';
import type { SyncError } from '../sync.ts';
import { expandVm } from '../../../shared/instancetype/expand-vm.ts';
import type { InstancetypeSyncResult, Resolved } from './sync-step.ts';
import { errorText } from '../../../shared/errors.ts';

const REFS = ['instancetypeRef', 'preferenceRef'] as const;

/**
 * KubeVirt returns these errors without a reason, so its VM controller reports them as
 * `UnsupportedSyncError` "unsupported error: …" (§1.1).
 */
function unsupported(message: string): SyncError {
  return { reason: 'UnsupportedSyncError', message: `unsupported error: ${message}`, requeue: true };
}

/** Runs the step for `vm`, whose matchers resolved to `resolved` (find succeeded). */
export async function expandIntoVm(vm: VirtualMachine, resolved: Resolved, policy: Exclude<InstancetypeReferencePolicy, 'reference'>, config: ClusterConfig, deps: VmDeps): Promise<InstancetypeSyncResult> {
  const ns = vm.metadata?.namespace ?? '';
  const name = vm.metadata?.name ?? '';
  if (policy === 'expand') {
    for (const [ref, what] of [['instancetypeRef', 'instance type'], ['preferenceRef', 'preference']] as const) {
      if (vm.status?.[ref]?.controllerRevisionRef?.name) {
        deps.log.info(`not expanding as ${what} already has revisionName`, { vm: `${ns}/${name}` });
        return { kind: 'ok', vm, resolved };
      }
    }
  }

  const expanded = expandVm(vm, resolved, config);
  if (!expanded.ok) return { kind: 'error', vm, error: unsupported(`error encountered while expanding into VirtualMachine: ${expanded.message}`) };
  if (isDeepStrictEqual(vm, expanded.vm)) return { kind: 'ok', vm, resolved };

  // KubeVirt's Update: the whole spec replaced, only if the VM is still the one read.
  let written: VirtualMachine;
  try {
    const ops: JsonPatchOperation[] = [
      { op: 'test', path: '/metadata/resourceVersion', value: vm.metadata?.resourceVersion },
      { op: 'replace', path: '/spec', value: expanded.vm.spec },
    ];
    written = await deps.kube.patch(VMS, ns, name, { type: 'json', ops });
  } catch (err) {
    return { kind: 'error', vm, error: unsupported(`error encountered when trying to update expanded VirtualMachine: ${errorText(err)}`) };
  }

  // Then UpdateStatus: the expanded status is the old one without its refs.
  const ops: JsonPatchOperation[] = [];
  for (const ref of REFS) {
    const value = written.status?.[ref];
    if (value !== undefined) ops.push({ op: 'test', path: `/status/${ref}`, value }, { op: 'remove', path: `/status/${ref}` });
  }
  if (ops.length > 0) {
    try {
      written = await deps.kube.patch(VMS, ns, name, { type: 'json', ops }, { subresource: 'status' });
    } catch (err) {
      return { kind: 'error', vm: written, error: unsupported(`error encountered when trying to update expanded VirtualMachine Status: ${errorText(err)}`) };
    }
  }

  // The revisions the refs pinned belong to nothing now.
  for (const ref of REFS) {
    const revision = vm.status?.[ref]?.controllerRevisionRef?.name;
    if (!revision) continue;
    try {
      await deps.kube.delete(CONTROLLER_REVISIONS, ns, revision);
    } catch (err) {
      const message = `error encountered cleaning controllerRevision ${revision} after successfully expanding VirtualMachine ${name}: ${errorText(err)}`;
      return { kind: 'error', vm: written, error: { reason: 'FailedCreate', message, requeue: true } };
    }
  }
  return { kind: 'spec-changed', vm: written };
}

