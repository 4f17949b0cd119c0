/**
 * Writes a VM's `status.volumeSnapshotStatuses` (reference §1.8) when it changed: one JSON patch
 * of that field alone, guarded by a `test` of its old value (absent = null), so it never races
 * the VM controller's own status fields.
 */
import { DATA_VOLUMES, VMS } from '../../shared/api/resources.ts';
import type { VirtualMachine } from '../../shared/api/snapshot.ts';
import type { JsonPatchOperation } from '../../shared/kube/client.ts';
import { NotFoundError } from '../../shared/kube/errors.ts';
import { backendVolumeName } from '../../shared/storage/vm-volumes.ts';
import { isDeepStrictEqual } from 'node:util';
import type { SnapshotDeps } from './deps.ts';
import type { ClassChoice } from './snapshot-class.ts';
import type { StorageLookup } from './storage-lookup.ts';
import { storageClassNames, volumeSnapshotStatuses } from './volume-snapshot-statuses.ts';

export async function syncVolumeSnapshotStatuses(vm: VirtualMachine, lookup: StorageLookup, deps: SnapshotDeps): Promise<void> {
  const ns = vm.metadata?.namespace ?? '';
  const { claims, pvcs } = await lookup.claimsOf(vm);
  const backendClaim = claims.find((c) => c.volumeName === backendVolumeName(vm.metadata?.name ?? ''))?.claimName;
  const dvNames = (vm.spec?.template?.spec?.volumes ?? []).map((v) => v.dataVolume?.name).filter((n): n is string => n !== undefined);
  const dvs = new Map((await Promise.all(dvNames.map(async (n) => [n, await deps.kube.get(DATA_VOLUMES, ns, n)] as const))).filter(([, dv]) => dv !== undefined));
  const reads = { pvc: (n: string) => pvcs.get(n), dataVolume: (n: string) => dvs.get(n) as never };
  const classes = new Map<string, ClassChoice>();
  for (const sc of storageClassNames(vm, reads, claims.map((c) => c.claimName))) classes.set(sc, sc === '' ? { name: '' } : await lookup.classFor(sc));
  const next = volumeSnapshotStatuses(vm, backendClaim, { ...reads, classes });
  const old = vm.status?.volumeSnapshotStatuses;
  if (isDeepStrictEqual(old ?? [], next)) return;
  const path = '/status/volumeSnapshotStatuses';
  const ops: JsonPatchOperation[] = !vm.status
    ? [{ op: 'test', path: '/metadata/resourceVersion', value: vm.metadata?.resourceVersion }, { op: 'add', path: '/status', value: { volumeSnapshotStatuses: next } }]
    : next.length === 0
      ? [{ op: 'test', path, value: old }, { op: 'remove', path }]
      : [{ op: 'test', path, value: old ?? null }, { op: old ? 'replace' : 'add', path, value: next }];
  try {
    await deps.kube.patch(VMS, ns, vm.metadata?.name ?? '', { type: 'json', ops }, { subresource: 'status' });
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
}
