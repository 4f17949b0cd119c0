/**
 * What the benchmarks need of the sandbox's audit log, reduced to a few fields per write so that a
 * sandbox in another process can send it over IPC: launcher pod creates (by owning VMI) and VMI
 * writes (phase, node, controller owner), migration writes (phase). Pure.
 */
import { KIND_VMI, MIGRATION_JOB_UID_LABEL } from '../../../shared/api/well-known.ts';
import type { AuditEntry } from '../../../sandbox/apiserver/index.ts';

/** A launcher pod created for the VMI `vmi`. */
export interface PodCreated {
  readonly kind: 'pod';
  readonly vmi: string;
  /** The migration whose target pod it is (`kubevirt.io/migrationJobUID`), if it is one. */
  readonly migrationUid?: string;
  /** Sandbox clock, epoch ms. */
  readonly time: number;
}

/** A VMI written (not deleted). */
export interface VmiWritten {
  readonly kind: 'vmi';
  readonly name: string;
  readonly verb: string;
  readonly phase: string;
  /** `status.nodeName`, once it has one. */
  readonly node?: string;
  /** The uid of its controller owner (a replica set, a pool), when it has one. */
  readonly ownerUid?: string;
  readonly time: number;
}

/** A migration written (or deleted: phase `Deleted`). */
export interface MigrationWritten {
  readonly kind: 'migration';
  readonly uid: string;
  readonly vmi: string;
  readonly phase: string;
  readonly time: number;
}

export type Milestone = PodCreated | VmiWritten | MigrationWritten;

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
    const migrationUid = (e.object.metadata.labels as Record<string, string> | undefined)?.[MIGRATION_JOB_UID_LABEL];
    return owner?.name ? { kind: 'pod', vmi: owner.name, time: e.time, ...(migrationUid ? { migrationUid } : {}) } : undefined;
  }
  if (e.resource === 'virtualmachineinstances' && e.type !== 'DELETED') {
    const status = (e.object as { status?: { phase?: string; nodeName?: string } }).status;
    const ownerUid = owners?.find((r) => r.controller)?.uid;
    return { kind: 'vmi', name: e.name, verb: e.verb, phase: status?.phase ?? '', time: e.time, ...(status?.nodeName ? { node: status.nodeName } : {}), ...(ownerUid ? { ownerUid } : {}) };
  }
  if (e.resource === 'virtualmachineinstancemigrations') {
    const m = e.object as { metadata: { uid?: string }; spec?: { vmiName?: string }; status?: { phase?: string } };
    return { kind: 'migration', uid: m.metadata.uid ?? '', vmi: m.spec?.vmiName ?? '', phase: e.type === 'DELETED' ? 'Deleted' : (m.status?.phase ?? ''), time: e.time };
  }
  return undefined;
}
