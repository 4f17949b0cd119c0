/**
 * Whether the source VM may be locked for a snapshot (reference §1.3 "Lock", steps 1–4), as a
 * pure function of what was read: every claim of the VM exists, is not being deleted, is Bound
 * and — when a DataVolume controls it — that DataVolume has `Succeeded`; offline, no pod other
 * than a finished one mounts those claims; no other snapshot holds the lock. A failure is the
 * text KubeVirt appends to the lock message (it lands in the Progressing *reason*, quirk 2).
 */
import { lockMessage } from './source-state.ts';
import type { Pvc, VirtualMachine } from '../../shared/api/snapshot.ts';

export interface LockFacts {
  vm: VirtualMachine;
  online: boolean;
  /** (volume, claim) pairs of the VM, backend claim included. */
  claims: { volumeName: string; claimName: string }[];
  /** A backend claim is needed but none was found. */
  backendMissing: boolean;
  pvcs: ReadonlyMap<string, Pvc>;
  /** Phase of each DataVolume by name (absent = not found). */
  dataVolumePhases: ReadonlyMap<string, string | undefined>;
  /** Names of claims mounted by pods that have not Succeeded. */
  claimsInUse: (claims: string[]) => { pods: number; claims: string[] };
  snapshotName: string;
}

/** `{ok: true}` (lock may be taken: set snapshotInProgress, then the finalizer), or why not. */
export type LockCheck = { ok: true } | { ok: false; message: string };

export function checkLock(f: LockFacts): LockCheck {
  const base = lockMessage(false);
  // A backend claim that should exist but does not fails silently (no text), as in KubeVirt.
  if (f.backendMissing) return { ok: false, message: base };
  const vmKey = `${f.vm.metadata?.namespace ?? ''}/${f.vm.metadata?.name ?? ''}`;
  for (const { claimName } of f.claims) {
    const pvc = f.pvcs.get(claimName);
    const fail = (what: string): LockCheck => ({ ok: false, message: `${base} source ${vmKey} ${what}: ${claimName}` });
    if (!pvc) return fail('volume doesnt exist');
    if (pvc.metadata?.deletionTimestamp) return fail('volume is being deleted');
    if (pvc.status?.phase !== 'Bound') return fail('volume not bound');
    const dvOwner = pvc.metadata?.ownerReferences?.find((r) => r.controller && r.kind === 'DataVolume');
    if (dvOwner && f.dataVolumePhases.get(dvOwner.name ?? '') !== 'Succeeded') return fail('volume not populated');
  }
  let message = base;
  let ok = true;
  if (!f.online) {
    const used = f.claimsInUse(f.claims.map((c) => c.claimName));
    if (used.pods > 0) {
      message += ` source is offline but ${used.pods} pods using PVCs [${used.claims.join(' ')}]`;
      ok = false;
    }
  }
  const holder = f.vm.status?.snapshotInProgress;
  if (holder && holder !== f.snapshotName) {
    message += ` snapshot "${holder}" in progress`;
    ok = false;
  }
  return ok ? { ok: true } : { ok: false, message };
}
