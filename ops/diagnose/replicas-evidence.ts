/**
 * Gathers what the replica verdicts need (replicas-verdicts.ts) for a VMI replica set (its VMIs)
 * or a VM pool (its VMs): the owner, the replicas it controls (by owner reference, as both
 * controllers count them), its events, its controller's expectations, dead letters and traces,
 * and the diagnosis of the first replica that is not ready. Reads only.
 */
import type { VirtualMachine, VirtualMachineInstance } from '../../shared/api/index.ts';
import { VM_POOLS, VMI_REPLICA_SETS, VMIS, VMS } from '../../shared/api/resources.ts';
import { isControlledByUid } from '../../shared/predicates/owner-refs.ts';
import { isVmiReady } from '../../shared/predicates/vmis.ts';
import type { Controller } from '../../shared/controllers.ts';
import { CREATION_EXPECTATIONS, DELETION_EXPECTATIONS } from '../../functions/pool/deps.ts';
import { RS_EXPECTATIONS } from '../../functions/replicaset/deps.ts';
import type { Diagnosis } from './finding.ts';
import type { OwnerExpectation, ReplicaOwnerView, ReplicasEvidence, ReplicaView } from './replicas-verdicts.ts';
import { gatherVmEvidence } from './vm-evidence.ts';
import { diagnoseVm } from './vm-verdicts.ts';
import { conditionView } from './views.ts';
import { eventsAbout, gatherVmiEvidence, type EvidenceSources } from './vmi-evidence.ts';
import { diagnoseVmi } from './vmi-verdicts.ts';

interface OwnerRaw {
  metadata?: { name?: string; uid?: string; resourceVersion?: string; deletionTimestamp?: unknown };
  spec?: { replicas?: number; paused?: boolean };
  status?: { conditions?: { type?: string; status?: string; reason?: string; message?: string }[] };
}

/** A VMI replica set's evidence. */
export async function gatherReplicaSetEvidence(src: EvidenceSources, namespace: string, name: string): Promise<ReplicasEvidence> {
  const raw = await src.cluster.get(VMI_REPLICA_SETS, namespace, name);
  const vmis = raw ? (await src.cluster.list(VMIS, namespace)).items.filter((v) => isControlledByUid(v, raw.metadata?.uid)) : [];
  const replicas = vmis.map((v: VirtualMachineInstance): ReplicaView => ({ name: v.metadata?.name ?? '', ready: isVmiReady(v), state: v.status?.phase ?? '', deleting: v.metadata?.deletionTimestamp !== undefined }));
  return gatherOwner(src, 'replicaset', 'VirtualMachineInstanceReplicaSet', namespace, name, raw, replicas, [RS_EXPECTATIONS], async (n) => diagnoseVmi(await gatherVmiEvidence(src, namespace, n)));
}

/** A VM pool's evidence. */
export async function gatherPoolEvidence(src: EvidenceSources, namespace: string, name: string): Promise<ReplicasEvidence> {
  const raw = await src.cluster.get(VM_POOLS, namespace, name);
  const vms = raw ? (await src.cluster.list(VMS, namespace)).items.filter((v) => isControlledByUid(v, raw.metadata?.uid)) : [];
  const replicas = vms.map((v: VirtualMachine): ReplicaView => ({
    name: v.metadata?.name ?? '',
    ready: (v.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    state: v.status?.printableStatus ?? '',
    deleting: v.metadata?.deletionTimestamp !== undefined,
  }));
  return gatherOwner(src, 'pool', 'VirtualMachinePool', namespace, name, raw, replicas, [CREATION_EXPECTATIONS, DELETION_EXPECTATIONS], async (n) => diagnoseVm(await gatherVmEvidence(src, namespace, n)));
}

async function gatherOwner(
  src: EvidenceSources,
  controller: Controller,
  kind: string,
  namespace: string,
  name: string,
  raw: OwnerRaw | undefined,
  replicas: ReplicaView[],
  expectationNames: readonly string[],
  diagnoseReplica: (name: string) => Promise<Diagnosis>,
): Promise<ReplicasEvidence> {
  const key = `${namespace}/${name}`;
  const [deadLetters, traces, records, events] = await Promise.all([
    src.queue.listDeadLetters({ key }),
    src.state.traces.recent(controller, key, src.now),
    Promise.all(expectationNames.map(async (n) => ({ name: n, record: await src.state.expectations.get(n, key) }))),
    raw ? eventsAbout(src.cluster, namespace, kind, name) : Promise.resolve([]),
  ]);
  const expectations = records.filter((x): x is OwnerExpectation => x.record !== undefined);
  const base = { now: src.now, key, deadLetters: deadLetters.filter((d) => d.controller === controller), traces, expectations, events };
  if (!raw) return { ...base, replicas: [] };
  const sorted = replicas.sort((a, b) => a.name.localeCompare(b.name));
  const unready = sorted.find((r) => !r.deleting && !r.ready);
  const owner: ReplicaOwnerView = {
    name,
    resourceVersion: raw.metadata?.resourceVersion ?? '',
    desired: raw.spec?.replicas ?? 1,
    paused: raw.spec?.paused === true,
    deleting: raw.metadata?.deletionTimestamp !== undefined,
    conditions: (raw.status?.conditions ?? []).map(conditionView),
  };
  return { ...base, owner, replicas: sorted, ...(unready ? { firstUnready: await diagnoseReplica(unready.name) } : {}) };
}
