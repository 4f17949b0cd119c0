/**
 * Gathers what the VMI verdicts need (vmi-verdicts.ts): the VMI, its launcher pods, its claims
 * (PVC, DataVolume, StorageClass binding mode), its events — from the cluster; its dead letters
 * from the queue; its pod expectation and recent traces from the table. Reads only.
 */
import type { KeyQueue } from '../../../shared/queue/port.ts';
import type { StateStore } from '../../../shared/state/port.ts';
import type { ClusterReader, KubeRecord } from '../cluster-reader.ts';
import type { ClaimView, ConditionView, EventView, PodView, VmiEvidence, VmiView } from './vmi-verdicts.ts';

/** The VMI controller's pod expectation scope (functions/vmi/deps.ts POD_EXPECTATIONS). */
const VMI_POD_EXPECTATIONS = 'vmi-pods';

export interface EvidenceSources {
  readonly cluster: ClusterReader;
  readonly queue: Pick<KeyQueue, 'listDeadLetters'>;
  readonly state: Pick<StateStore, 'expectations' | 'traces'>;
  readonly now: number;
}

export async function gatherVmiEvidence(src: EvidenceSources, namespace: string, name: string): Promise<VmiEvidence> {
  const key = `${namespace}/${name}`;
  const [raw, deadLetters, expectation, traces] = await Promise.all([
    src.cluster.custom('vmi', namespace, name),
    src.queue.listDeadLetters({ key }),
    src.state.expectations.get(VMI_POD_EXPECTATIONS, key),
    src.state.traces.recent('vmi', key, src.now),
  ]);
  const base = { now: src.now, key, deadLetters, traces, ...(expectation ? { expectation } : {}) };
  if (!raw) return { ...base, pods: [], claims: [], events: [] };
  const vmi = vmiView(raw);
  const [pods, claims, events] = await Promise.all([
    vmi.uid ? src.cluster.pods(namespace, `kubevirt.io/created-by=${vmi.uid}`) : Promise.resolve([]),
    gatherClaims(src.cluster, raw, namespace),
    src.cluster.events(namespace, 'VirtualMachineInstance', name),
  ]);
  // Migration target pods carry the VMI's created-by label too; the launcher is the one without a migration job.
  const launchers = pods.filter((p) => !p.metadata?.labels?.['kubevirt.io/migrationJobUID']);
  return { ...base, vmi, pods: launchers.map(podView), claims, events: events.map(eventView).sort((a, b) => a.lastAt - b.lastAt) };
}

export function vmiView(raw: KubeRecord): VmiView {
  const status = (raw.status ?? {}) as { phase?: string; nodeName?: string; conditions?: ConditionView[] };
  return {
    namespace: raw.metadata?.namespace ?? '',
    name: raw.metadata?.name ?? '',
    uid: raw.metadata?.uid ?? '',
    resourceVersion: raw.metadata?.resourceVersion ?? '',
    phase: status.phase ?? '',
    ...(status.nodeName ? { nodeName: status.nodeName } : {}),
    deleting: raw.metadata?.deletionTimestamp !== undefined,
    conditions: (status.conditions ?? []).map(conditionView),
  };
}

export function conditionView(c: { type?: string; status?: string; reason?: string; message?: string }): ConditionView {
  return { type: c.type ?? '', status: c.status ?? '', ...(c.reason ? { reason: c.reason } : {}), ...(c.message ? { message: c.message } : {}) };
}

export function podView(raw: KubeRecord): PodView {
  const status = (raw.status ?? {}) as { phase?: string; conditions?: { type?: string; status?: string; reason?: string; message?: string }[] };
  const scheduled = status.conditions?.find((c) => c.type === 'PodScheduled');
  const nodeName = (raw.spec as { nodeName?: string } | undefined)?.nodeName;
  return {
    name: raw.metadata?.name ?? '',
    phase: status.phase ?? 'Pending',
    ...(nodeName ? { nodeName } : {}),
    ...(scheduled ? { scheduled: conditionView(scheduled) } : {}),
    createdAt: epoch(raw.metadata?.creationTimestamp),
    deleting: raw.metadata?.deletionTimestamp !== undefined,
  };
}

export function eventView(raw: KubeRecord): EventView {
  const r = raw as { type?: string; reason?: string; message?: string; count?: number; lastTimestamp?: string | Date; eventTime?: string | Date };
  return { type: r.type ?? 'Normal', reason: r.reason ?? '', message: r.message ?? '', count: r.count ?? 1, lastAt: epoch(r.lastTimestamp ?? r.eventTime ?? raw.metadata?.creationTimestamp) };
}

function epoch(t: string | Date | undefined): number {
  if (t === undefined) return 0;
  const ms = (t instanceof Date ? t : new Date(t)).getTime();
  return Number.isFinite(ms) ? ms : 0;
}

/** Every PVC / DataVolume volume: the claim, its class's binding mode, the DataVolume's progress. */
async function gatherClaims(cluster: ClusterReader, raw: KubeRecord, namespace: string): Promise<ClaimView[]> {
  const volumes = ((raw.spec as { volumes?: { name?: string; persistentVolumeClaim?: { claimName?: string }; dataVolume?: { name?: string } }[] } | undefined)?.volumes ?? []);
  const refs = volumes.flatMap((v): { volume: string; kind: ClaimView['kind']; claim: string }[] =>
    v.persistentVolumeClaim?.claimName ? [{ volume: v.name ?? '', kind: 'pvc', claim: v.persistentVolumeClaim.claimName }]
    : v.dataVolume?.name ? [{ volume: v.name ?? '', kind: 'dataVolume', claim: v.dataVolume.name }]
    : [],
  );
  return Promise.all(
    refs.map(async (r): Promise<ClaimView> => {
      const [pvc, dv] = await Promise.all([cluster.pvc(namespace, r.claim), r.kind === 'dataVolume' ? cluster.custom('dataVolume', namespace, r.claim) : Promise.resolve(undefined)]);
      const className = (pvc?.spec as { storageClassName?: string } | undefined)?.storageClassName;
      const sc = className ? await cluster.storageClass(className) : undefined;
      const bindingMode = (sc as { volumeBindingMode?: string } | undefined)?.volumeBindingMode;
      const dvStatus = dv?.status as { phase?: string; progress?: string; conditions?: { type?: string; message?: string }[] } | undefined;
      const dvMessage = dvStatus?.conditions?.find((c) => c.type === 'Running' || c.type === 'Ready')?.message;
      return {
        volume: r.volume,
        kind: r.kind,
        name: `${namespace}/${r.claim}`,
        ...(pvc ? { pvc: { phase: ((pvc.status as { phase?: string } | undefined)?.phase ?? 'Pending'), ...(className ? { storageClass: className } : {}) } } : {}),
        ...(bindingMode ? { bindingMode } : {}),
        ...(dv ? { dataVolume: { phase: dvStatus?.phase ?? '', ...(dvStatus?.progress ? { progress: dvStatus.progress } : {}), ...(dvMessage ? { message: dvMessage } : {}) } } : {}),
      };
    }),
  );
}
