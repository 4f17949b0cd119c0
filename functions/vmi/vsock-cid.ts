/**
 * The VSOCK CID of an `autoattachVSOCK` VMI (KubeVirt `pkg/virt-controller/watch/vsock`
 * `CIDsMap.Allocate`, called at the hand-off): a guest CID (≥ 3) no other live VMI of the cluster
 * holds, written to `status.VSOCKCID` with the hand-off and kept for the VMI's life.
 *
 * KubeVirt keeps the taken CIDs in one process's map, filled from the VMIs at start-up. Our
 * workers are stateless and many, so a choice is made conflict-free in two parts:
 * - the durable record is the VMI's own `status.VSOCKCID`, as in KubeVirt: the taken set is read
 *   from a list of the cluster's VMIs (a quorum read, never a cache), so it survives any restart
 *   and a CID is free again as soon as its VMI is gone;
 * - between the choice and the hand-off write that records it, the CID is reserved with a lease of
 *   limit 1 (`vsock-cid/<cid>`, a conditional write in the state table): a second worker choosing
 *   the same CID for another VMI in that window loses the lease and probes on. The lease outlives
 *   the write by far (it only has to cover list staleness, which there is none of), then expires.
 *
 * The probe starts at a point derived from the VMI's UID (KubeVirt starts at a random one), so a
 * retried hand-off of the same VMI tries the same CID first and re-acquires its own lease.
 */
import { createHash } from 'node:crypto';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import type { Leases } from '../../shared/state/port.ts';

/** The first guest CID (0–2 are the hypervisor, the local loopback and the host). */
export const FIRST_GUEST_CID = 3;
const MAX_CID = 0xffffffff;
/** How long a chosen CID is reserved before the VMI's status must carry it. */
export const VSOCK_RESERVATION_TTL_MS = 10 * 60 * 1000;

/** The lease counter reserving `cid`. */
export const vsockLease = (cid: number) => `vsock-cid/${cid}`;

/** The CIDs the cluster's VMIs carry in `status.VSOCKCID`, except `self`'s. */
export function takenCids(vmis: readonly VirtualMachineInstance[], selfUid: string): Set<number> {
  const out = new Set<number>();
  for (const v of vmis) {
    const cid = v.status?.VSOCKCID;
    if (cid !== undefined && v.metadata?.uid !== selfUid) out.add(cid);
  }
  return out;
}

/** Where a VMI's probe starts: a guest CID derived from its UID. */
export function probeStart(uid: string): number {
  const n = createHash('sha256').update(uid).digest().readUInt32BE(0);
  return n < FIRST_GUEST_CID ? n + FIRST_GUEST_CID : n;
}

const next = (cid: number) => (cid === MAX_CID ? FIRST_GUEST_CID : cid + 1);

/**
 * Chooses and reserves a CID for the VMI with `uid` (lease holder `holder`): the first from its
 * probe start that no VMI carries and whose lease it gets. Throws when `maxTries` candidates were
 * all taken (KubeVirt's "CIDs exhausted" is the 2³² case; a bound keeps one pass short).
 */
export async function allocateCid(uid: string, holder: string, taken: ReadonlySet<number>, leases: Leases, now: number, maxTries = 64): Promise<number> {
  let cid = probeStart(uid);
  for (let tried = 0; tried < maxTries; cid = next(cid)) {
    if (taken.has(cid)) continue;
    tried++;
    if (await leases.acquire(vsockLease(cid), holder, 1, now, VSOCK_RESERVATION_TTL_MS)) return cid;
  }
  throw new Error(`no free VSOCK CID after ${maxTries} reserved candidates`);
}
