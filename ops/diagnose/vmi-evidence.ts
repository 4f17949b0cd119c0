/**
 * Gathers what the VMI verdicts need (vmi-verdicts.ts): the VMI, its launcher pods, its claims
 * (PVC, DataVolume, StorageClass binding mode), its events — from the cluster; its dead letters
 * from the queue; its pod expectation and recent traces from the table. Reads only.
 */
import { DATA_VOLUMES, EVENTS, PODS, PVCS, VMIS } from '../../shared/api/resources.ts';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { CREATED_BY_LABEL, MIGRATION_JOB_UID_LABEL } from '../../shared/api/well-known.ts';
import type { KeyQueue } from '../../shared/queue/port.ts';
import type { StateStore } from '../../shared/state/port.ts';
import { POD_EXPECTATIONS } from '../../functions/vmi/deps.ts';
import { STORAGE_CLASSES, type ClusterReader } from '../cluster-reader.ts';
import { conditionView, eventView, podView, type EventView } from './views.ts';
import type { ClaimView, VmiEvidence, VmiView } from './vmi-verdicts.ts';

/** Where the evidence comes from; every source is read, none written. */
export interface EvidenceSources {
  readonly cluster: ClusterReader;
  readonly queue: Pick<KeyQueue, 'listDeadLetters'>;
  readonly state: Pick<StateStore, 'expectations' | 'traces' | 'leases'>;
  readonly now: number;
}

export async function gatherVmiEvidence(src: EvidenceSources, namespace: string, name: string): Promise<VmiEvidence> {
  const key = `${namespace}/${name}`;
  const [raw, deadLetters, expectation, traces] = await Promise.all([
    src.cluster.get(VMIS, namespace, name),
    src.queue.listDeadLetters({ key }),
    src.state.expectations.get(POD_EXPECTATIONS, key),
    src.state.traces.recent('vmi', key, src.now),
  ]);
  const base = { now: src.now, key, deadLetters: deadLetters.filter((d) => d.controller === 'vmi'), traces, ...(expectation ? { expectation } : {}) };
  if (!raw) return { ...base, pods: [], claims: [], events: [] };
  const vmi = vmiView(raw);
  const [pods, claims, events] = await Promise.all([
    vmi.uid ? src.cluster.list(PODS, namespace, { labelSelector: `${CREATED_BY_LABEL}=${vmi.uid}` }).then((l) => l.items) : Promise.resolve([]),
    gatherClaims(src.cluster, raw, namespace),
    eventsAbout(src.cluster, namespace, 'VirtualMachineInstance', name),
  ]);
  // Migration target pods carry the VMI's created-by label too; the launcher is the one without a migration job.
  const launchers = pods.filter((p) => !p.metadata?.labels?.[MIGRATION_JOB_UID_LABEL]);
  return { ...base, vmi, pods: launchers.map(podView), claims, events };
}

/** Events about one object, oldest first. */
export async function eventsAbout(cluster: ClusterReader, namespace: string, kind: string, name: string): Promise<EventView[]> {
  const list = await cluster.list(EVENTS, namespace, { fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}` });
  return list.items.map(eventView).sort((a, b) => a.lastAt - b.lastAt);
}

export function vmiView(raw: VirtualMachineInstance): VmiView {
  const status = raw.status ?? {};
  return {
    namespace: raw.metadata?.namespace ?? '',
    name: raw.metadata?.name ?? '',
    uid: raw.metadata?.uid ?? '',
    resourceVersion: raw.metadata?.resourceVersion ?? '',
    phase: status.phase ?? '',
    ...(status.nodeName ? { nodeName: status.nodeName } : {}),
    deleting: raw.metadata?.deletionTimestamp !== undefined,
    conditions: (status.conditions ?? []).map((c) => conditionView(c as Parameters<typeof conditionView>[0])),
  };
}

/** Every PVC / DataVolume volume: the claim, its class's binding mode, the DataVolume's progress. */
async function gatherClaims(cluster: ClusterReader, raw: VirtualMachineInstance, namespace: string): Promise<ClaimView[]> {
  const refs = (raw.spec?.volumes ?? []).flatMap((v): { volume: string; kind: ClaimView['kind']; claim: string }[] =>
    v.persistentVolumeClaim?.claimName ? [{ volume: v.name, kind: 'pvc', claim: v.persistentVolumeClaim.claimName }]
    : v.dataVolume?.name ? [{ volume: v.name, kind: 'dataVolume', claim: v.dataVolume.name }]
    : [],
  );
  return Promise.all(
    refs.map(async (r): Promise<ClaimView> => {
      const [pvc, dv] = await Promise.all([cluster.get(PVCS, namespace, r.claim), r.kind === 'dataVolume' ? cluster.get(DATA_VOLUMES, namespace, r.claim) : Promise.resolve(undefined)]);
      const className = pvc?.spec?.storageClassName;
      // A cluster that does not serve StorageClasses reads as "binding mode unknown".
      const sc = className ? await cluster.get(STORAGE_CLASSES, undefined, className).catch(() => undefined) : undefined;
      const bindingMode = sc?.volumeBindingMode;
      const dvStatus = dv?.status as { phase?: string; progress?: string; conditions?: { type?: string; message?: string }[] } | undefined;
      const dvMessage = dvStatus?.conditions?.find((c) => c.type === 'Running' || c.type === 'Ready')?.message;
      return {
        volume: r.volume,
        kind: r.kind,
        name: `${namespace}/${r.claim}`,
        ...(pvc ? { pvc: { phase: pvc.status?.phase ?? 'Pending', ...(className ? { storageClass: className } : {}) } } : {}),
        ...(bindingMode ? { bindingMode } : {}),
        ...(dv ? { dataVolume: { phase: dvStatus?.phase ?? '', ...(dvStatus?.progress ? { progress: dvStatus.progress } : {}), ...(dvMessage ? { message: dvMessage } : {}) } } : {}),
      };
    }),
  );
}
