/**
 * What the benchmarks need of the sandbox's audit log, reduced to a few fields per write so that a
 * sandbox in another process can send it over IPC: launcher pod creates (by owning VMI) and VMI
 * writes (phase, controller owner). Pure.
 */
import { KIND_VMI } from '../../../shared/api/well-known.ts';
import type { AuditEntry } from '../../../infra/sandbox/apiserver/index.ts';

/** A launcher pod created for the VMI `vmi`. */
export interface PodCreated {
  readonly kind: 'pod';
  readonly vmi: string;
  /** Sandbox clock, epoch ms. */
  readonly time: number;
}

/** A VMI written (not deleted). */
export interface VmiWritten {
  readonly kind: 'vmi';
  readonly name: string;
  readonly verb: string;
  readonly phase: string;
  /** The uid of its controller owner (a replica set, a pool), when it has one. */
  readonly ownerUid?: string;
  readonly time: number;
}

export type Milestone = PodCreated | VmiWritten;

interface OwnerRef {
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
}

/** The milestone an audit entry is, or undefined for every other write. */
export function milestoneOf(e: AuditEntry): Milestone | undefined {
  const owners = e.object.metadata.ownerReferences as OwnerRef[] | undefined;
  if (e.resource === 'pods' && e.verb === 'create' && e.type === 'ADDED') {
    const owner = owners?.find((r) => r.kind === KIND_VMI && r.controller);
    return owner?.name ? { kind: 'pod', vmi: owner.name, time: e.time } : undefined;
  }
  if (e.resource === 'virtualmachineinstances' && e.type !== 'DELETED') {
    const phase = (e.object as { status?: { phase?: string } }).status?.phase ?? '';
    const ownerUid = owners?.find((r) => r.controller)?.uid;
    return { kind: 'vmi', name: e.name, verb: e.verb, phase, time: e.time, ...(ownerUid ? { ownerUid } : {}) };
  }
  return undefined;
}
