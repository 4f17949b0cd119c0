/**
 * Reads behind the VolumeSnapshotClass choice (reference §1.7) and a VM's claims, memoised for
 * one pass: StorageClasses and CDI StorageProfiles by name, the VolumeSnapshotClasses once, the
 * VM's claims by name, its backend-storage claim (`persistent-state-for=<vm>`, the newest one
 * not being deleted). Only reads; the decisions are snapshot-class.ts and lock-check.ts.
 */
import { PVCS, STORAGE_CLASSES, STORAGE_PROFILES, VOLUME_SNAPSHOT_CLASSES } from '../../shared/api/resources.ts';
import type { Pvc, StorageClass, VirtualMachine, VolumeSnapshotClass } from '../../shared/api/snapshot.ts';
import { BACKEND_LABEL, needsBackendStorage, vmClaims } from '../../shared/storage/vm-volumes.ts';
import type { SnapshotKube } from './deps.ts';
import { volumeSnapshotClassFor, type ClassChoice } from './snapshot-class.ts';

export interface StorageLookup {
  /** The VolumeSnapshotClass for a storage class name (§1.7). */
  classFor(storageClassName: string): Promise<ClassChoice>;
  storageClass(name: string): Promise<StorageClass | undefined>;
  /** The VM's (volume, claim) pairs, backend claim included, and the claims that exist. */
  claimsOf(vm: VirtualMachine): Promise<{ claims: { volumeName: string; claimName: string }[]; pvcs: Map<string, Pvc>; backendMissing: boolean }>;
}

const timeOf = (p: Pvc) => Date.parse(String(p.metadata?.creationTimestamp ?? '')) || 0;

export function storageLookup(kube: SnapshotKube, namespace: string): StorageLookup {
  const classes = new Map<string, Promise<StorageClass | undefined>>();
  const profiles = new Map<string, Promise<string | undefined>>();
  let vscs: Promise<VolumeSnapshotClass[]> | undefined;
  const storageClass = (name: string) => {
    if (!classes.has(name)) classes.set(name, kube.get(STORAGE_CLASSES, undefined, name));
    return classes.get(name)!;
  };
  const profileClass = (name: string) => {
    if (!profiles.has(name)) profiles.set(name, kube.get(STORAGE_PROFILES, undefined, name).then((p) => p?.status?.snapshotClass || undefined));
    return profiles.get(name)!;
  };
  return {
    storageClass,
    async classFor(name) {
      vscs ??= kube.list(VOLUME_SNAPSHOT_CLASSES, undefined).then((l) => l.items);
      const [sc, profile, all] = await Promise.all([storageClass(name), profileClass(name), vscs]);
      return volumeSnapshotClassFor(name, sc, profile, all);
    },
    async claimsOf(vm) {
      const vmName = vm.metadata?.name ?? '';
      let backend: string | undefined;
      let backendMissing = false;
      if (needsBackendStorage(vm)) {
        const found = (await kube.list(PVCS, namespace, { labelSelector: `${BACKEND_LABEL}=${vmName}` })).items as Pvc[];
        const live = found.filter((p) => !p.metadata?.deletionTimestamp).sort((a, b) => timeOf(b) - timeOf(a));
        backend = live[0]?.metadata?.name;
        backendMissing = backend === undefined;
      }
      const claims = vmClaims(vm, backend);
      const read = await Promise.all(claims.map((c) => kube.get(PVCS, namespace, c.claimName)));
      const pvcs = new Map<string, Pvc>();
      read.forEach((p, i) => {
        if (p) pvcs.set(claims[i]!.claimName, p as Pvc);
      });
      return { claims, pvcs, backendMissing };
    },
  };
}
