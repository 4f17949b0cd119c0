/**
 * The snapshot's source VM (reference §1.3): read with its VMI, locked (`status.snapshotInProgress`
 * first, then the source-protection finalizer: a failure in between is a partial lock the next
 * pass completes), unlocked (finalizer, then status), and the guest frozen and thawed through
 * virt-api. The decisions are lock-check.ts and source-state.ts; this file does the writes.
 */
import { DATA_VOLUMES, PODS, VMIS, VMS } from '../../shared/api/resources.ts';
import type { VirtualMachine, VirtualMachineSnapshot, Vmi } from '../../shared/api/snapshot.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import type { JsonPatchOperation } from '../../shared/kube/client.ts';
import { addFinalizerOps, removeFinalizerOps } from '../../shared/kube/finalizer-ops.ts';
import { failureDeadlineMs } from './deadline.ts';
import type { SnapshotDeps } from './deps.ts';
import { checkLock } from './lock-check.ts';
import { SOURCE_FINALIZER } from './names.ts';
import { lockMessage, sourceState, type SourceState } from './source-state.ts';
import type { StorageLookup } from './storage-lookup.ts';

/** The source as one pass sees it. */
export interface Source {
  vm: VirtualMachine;
  vmi: Vmi | undefined;
  state: SourceState;
}

/** Go's `%+v` of a TypedLocalObjectReference, as KubeVirt's "unknown source" error prints it. */
const printRef = (r: { apiGroup?: string; kind?: string; name?: string } | undefined) => `{APIGroup:${r?.apiGroup ?? '<nil>'} Kind:${r?.kind ?? ''} Name:${r?.name ?? ''}}`;

/** The VM a snapshot names (undefined when it does not exist); any other kind is permanent bad input. */
export async function sourceOfSnapshot(snapshot: VirtualMachineSnapshot, deps: SnapshotDeps, rv?: string): Promise<Source | undefined> {
  const ref = snapshot.spec?.source;
  if (ref?.kind !== 'VirtualMachine') throw new InvalidInputError('spec.source', `unknown source ${printRef(ref)}`, 'UnknownSource');
  return readSource(snapshot.metadata?.namespace ?? '', ref.name ?? '', snapshot.metadata?.name ?? '', deps, rv);
}

/** The VM `vmName` and its VMI, with the lock state for snapshot `snapshotName`. */
export async function readSource(namespace: string, vmName: string, snapshotName: string, deps: SnapshotDeps, rv?: string): Promise<Source | undefined> {
  const [vm, vmi] = await Promise.all([deps.kube.get(VMS, namespace, vmName, { resourceVersion: rv }), deps.kube.get(VMIS, namespace, vmName, { resourceVersion: rv })]);
  if (!vm) return undefined;
  const v = vm as unknown as VirtualMachine;
  const i = vmi as unknown as Vmi | undefined;
  return { vm: v, vmi: i, state: sourceState(v, i, snapshotName) };
}

/** Claims that pods other than finished ones mount (an offline source must have none). */
async function claimsInUse(namespace: string, deps: SnapshotDeps): Promise<(claims: string[]) => { pods: number; claims: string[] }> {
  const pods = (await deps.kube.list(PODS, namespace)).items;
  return (claims) => {
    const wanted = new Set(claims);
    const used = new Set<string>();
    let n = 0;
    for (const p of pods) {
      if (p.status?.phase === 'Succeeded') continue;
      const mine = (p.spec?.volumes ?? []).map((v) => v.persistentVolumeClaim?.claimName).filter((c): c is string => c !== undefined && wanted.has(c));
      if (mine.length === 0) continue;
      n++;
      for (const c of mine) used.add(c);
    }
    return { pods: n, claims: [...used] };
  };
}

async function patchVm(vm: VirtualMachine, ops: JsonPatchOperation[], deps: SnapshotDeps, status = false): Promise<VirtualMachine> {
  const written = await deps.kube.patch(VMS, vm.metadata?.namespace ?? '', vm.metadata?.name ?? '', { type: 'json', ops }, status ? { subresource: 'status' } : {});
  return written as unknown as VirtualMachine;
}

/**
 * Tries to lock the source for `snapshotName`: whether it is now locked, and the lock message
 * (with KubeVirt's failure text appended when not).
 */
export async function lock(src: Source, snapshotName: string, lookup: StorageLookup, deps: SnapshotDeps): Promise<{ locked: boolean; message: string }> {
  const namespace = src.vm.metadata?.namespace ?? '';
  const { claims, pvcs, backendMissing } = await lookup.claimsOf(src.vm);
  const dvNames = [...pvcs.values()].map((p) => p.metadata?.ownerReferences?.find((r) => r.controller && r.kind === 'DataVolume')?.name).filter((n): n is string => n !== undefined);
  const dvs = await Promise.all(dvNames.map((n) => deps.kube.get(DATA_VOLUMES, namespace, n)));
  const dataVolumePhases = new Map<string, string | undefined>(dvNames.map((n, i) => [n, dvs[i]?.status?.phase]));
  const online = src.vmi !== undefined;
  const inUse = online ? () => ({ pods: 0, claims: [] }) : await claimsInUse(namespace, deps);
  const check = checkLock({ vm: src.vm, online, claims, backendMissing, pvcs, dataVolumePhases, claimsInUse: inUse, snapshotName });
  if (!check.ok) return { locked: false, message: check.message };
  let vm = src.vm;
  if (!vm.status?.snapshotInProgress) {
    const ops: JsonPatchOperation[] = vm.status
      ? [{ op: 'test', path: '/metadata/resourceVersion', value: vm.metadata?.resourceVersion }, { op: 'add', path: '/status/snapshotInProgress', value: snapshotName }]
      : [{ op: 'test', path: '/metadata/resourceVersion', value: vm.metadata?.resourceVersion }, { op: 'add', path: '/status', value: { snapshotInProgress: snapshotName } }];
    vm = await patchVm(vm, ops, deps, true);
  }
  const fin = addFinalizerOps(vm, SOURCE_FINALIZER);
  if (fin.length > 0) vm = await patchVm(vm, fin, deps);
  src.vm = vm;
  src.state = sourceState(vm, src.vmi, snapshotName);
  return { locked: src.state.locked, message: lockMessage(src.state.locked) };
}

/** Unlocks a source this snapshot holds (finalizer, then status); true when it is not locked by it any more. */
export async function unlock(src: Source, snapshotName: string, deps: SnapshotDeps): Promise<boolean> {
  let vm = src.vm;
  if (vm.status?.snapshotInProgress !== snapshotName) return true;
  const fin = removeFinalizerOps(vm, SOURCE_FINALIZER);
  if (fin.length > 0) vm = await patchVm(vm, fin, deps);
  vm = await patchVm(vm, [{ op: 'test', path: '/status/snapshotInProgress', value: snapshotName }, { op: 'remove', path: '/status/snapshotInProgress' }], deps, true);
  src.vm = vm;
  src.state = sourceState(vm, src.vmi, snapshotName);
  return !src.state.locked;
}

/** A duration as Go prints a `metav1.Duration` ("5m0s", "0s", "1h0m30s"). */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  return `${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}${s}s`;
}

/** Freezes the guest (no-op when frozen, paused or without an agent); virt-api's refusal is thrown. */
export async function freeze(src: Source, snapshot: VirtualMachineSnapshot, deps: SnapshotDeps): Promise<void> {
  if (!src.state.locked) throw new Error('attempting to freeze unlocked VM');
  if (src.state.frozen || src.state.paused || !src.state.guestAgent) return;
  await deps.virtApi.put('virtualmachineinstances', src.vm.metadata?.namespace ?? '', src.vm.metadata?.name ?? '', 'freeze', { unfreezeTimeout: goDuration(failureDeadlineMs(snapshot)) });
}

/** Thaws the guest when locked, with an agent, not paused (the frozen state is not checked, as upstream). */
export async function unfreeze(src: Source | undefined, deps: SnapshotDeps): Promise<void> {
  if (!src || !src.state.locked || !src.state.guestAgent || src.state.paused) return;
  await deps.virtApi.put('virtualmachineinstances', src.vm.metadata?.namespace ?? '', src.vm.metadata?.name ?? '', 'unfreeze', {});
}
