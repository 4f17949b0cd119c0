/**
 * Puts a differential case on the sandbox (either lane) as a user and the cluster would have it:
 * its namespace, its objects (DataVolumes and PVCs with their status, as CDI and the PV binder
 * leave them), the KubeVirt CR's settings, and KubeVirt's defaulted VMI; then waits for what the
 * product's VMI controller does with it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import type { KubeVirt, VirtualMachineInstance } from '../../shared/api/index.ts';
import { defineResource, KUBEVIRTS, PODS, VMIS, type Resource } from '../../shared/api/resources.ts';
import { CREATED_BY_LABEL, VMI_CONDITION } from '../../shared/api/well-known.ts';
import type { KubeClient, KubeObject } from '../../shared/kube/client.ts';
import { AlreadyExistsError, NotFoundError } from '../../shared/kube/errors.ts';
import type { CaseObject, DifferentialCase } from './corpus.ts';

/** The resources a case's objects are made of, by kind (plural, scope). */
const KINDS: Record<string, { plural: string; namespaced: boolean; status?: boolean }> = {
  Namespace: { plural: 'namespaces', namespaced: false },
  PersistentVolumeClaim: { plural: 'persistentvolumeclaims', namespaced: true, status: true },
  DataVolume: { plural: 'datavolumes', namespaced: true, status: true },
  ConfigMap: { plural: 'configmaps', namespaced: true },
  Secret: { plural: 'secrets', namespaced: true },
  ServiceAccount: { plural: 'serviceaccounts', namespaced: true },
  ResourceQuota: { plural: 'resourcequotas', namespaced: true, status: true },
  PriorityClass: { plural: 'priorityclasses', namespaced: false },
  StorageClass: { plural: 'storageclasses', namespaced: false },
  RuntimeClass: { plural: 'runtimeclasses', namespaced: false },
  NetworkAttachmentDefinition: { plural: 'network-attachment-definitions', namespaced: true },
};

function resourceOf(o: CaseObject): Resource<CaseObject & KubeObject> {
  const k = KINDS[o.kind];
  if (!k) throw new Error(`a case object of kind ${o.kind} (${o.metadata.name}) is not supported by the differential test: add it to KINDS`);
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  return defineResource({ group: group!, version: version!, plural: k.plural, kind: o.kind, namespaced: k.namespaced, subresources: k.status ? ['status'] : [] });
}

/** What the case's objects became on the cluster: the oracle's UIDs → the server's, and what this API server does not serve. */
export interface Applied {
  readonly uids: Map<string, string>;
  readonly skipped: string[];
}

async function ensureNamespace(kube: KubeClient, name: string, labels: Record<string, string> | undefined): Promise<void> {
  const ns = resourceOf({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  try {
    await kube.create(ns, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...(labels ? { labels } : {}) } });
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
  }
}

/**
 * Creates the case's namespace and objects. On the real control plane it also waits for what
 * admission needs there: the namespace's `default` ServiceAccount (made by the service-account
 * controller) and each ResourceQuota's computed status (quota admission refuses pods while a
 * quota's usage is unknown).
 */
export async function applyObjects(kube: KubeClient, c: DifferentialCase, real: boolean): Promise<Applied> {
  const uids = new Map<string, string>();
  const skipped: string[] = [];
  const namespaces = c.objects.filter((o) => o.kind === 'Namespace');
  await ensureNamespace(kube, c.namespace, namespaces.find((n) => n.metadata.name === c.namespace)?.metadata.labels);
  for (const n of namespaces) if (n.metadata.name !== c.namespace) await ensureNamespace(kube, n.metadata.name, n.metadata.labels);
  if (real) await waitFor(`ServiceAccount ${c.namespace}/default`, async () => (await kube.get(SERVICE_ACCOUNTS, c.namespace, 'default')) !== undefined);

  // DataVolumes before their claims: a claim's owner reference names the DataVolume's UID.
  const order = (o: CaseObject) => (o.kind === 'DataVolume' ? 0 : 1);
  const rest = c.objects.filter((o) => o.kind !== 'Namespace' && o.kind !== 'KubeVirt').sort((a, b) => order(a) - order(b));
  for (const o of rest) {
    const res = resourceOf(o);
    const { uid, ...metadata } = o.metadata;
    const body: CaseObject & KubeObject = structuredClone({ ...o, metadata });
    delete body.status;
    for (const ref of body.metadata.ownerReferences ?? []) ref.uid = uids.get(ref.uid) ?? ref.uid;
    let created: CaseObject & KubeObject;
    try {
      created = await kube.create(res, body);
    } catch (err) {
      // A cluster-scoped object (a PriorityClass, StorageClass, RuntimeClass) shared by cases exists already.
      if (err instanceof AlreadyExistsError && !KINDS[o.kind]!.namespaced) continue;
      // Not served by this API server (the emulator has no PriorityClasses or RuntimeClasses,
      // neither lane has Multus' CRD): the product never reads it for rendering; the pod shows
      // what it missed.
      if (err instanceof NotFoundError) {
        skipped.push(`${o.kind} ${o.metadata.name}: not served by this API server`);
        continue;
      }
      throw err;
    }
    if (uid && created.metadata?.uid) uids.set(uid, created.metadata.uid);
    if (o.status && KINDS[o.kind]!.status && o.kind !== 'ResourceQuota') {
      await kube.patch(res, created.metadata?.namespace, created.metadata?.name ?? '', { type: 'merge', body: { status: o.status } }, { subresource: 'status' });
    }
    if (real && o.kind === 'ResourceQuota') {
      await waitFor(`ResourceQuota ${c.namespace}/${o.metadata.name} status`, async () => {
        const q = (await kube.get(res, c.namespace, o.metadata.name)) as { status?: { hard?: Record<string, string> } } | undefined;
        return Object.keys(q?.status?.hard ?? {}).length > 0;
      });
    }
  }
  return { uids, skipped };
}

const SERVICE_ACCOUNTS = defineResource<KubeObject>({ group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true });

async function waitFor(what: string, cond: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** The parts of the KubeVirt CR a case sets: its spec and its annotations (virt-api copies one to VMIs). */
export interface KubeVirtSettings {
  readonly spec: KubeVirt['spec'];
  readonly annotations: Record<string, string>;
}

/** The key cases are grouped by: cases with the same settings run together. */
export function settingsKey(s: KubeVirtSettings | undefined): string {
  return s ? JSON.stringify(s) : '';
}

/**
 * Gives the sandbox's `kubevirt/kubevirt` CR the case's spec and annotations, or puts back the
 * sandbox's own (`original`). The status (phase Deployed, as virt-operator leaves it) stays.
 */
export async function setKubeVirt(kube: KubeClient, settings: KubeVirtSettings | undefined, original: KubeVirt): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const cur = await kube.get(KUBEVIRTS, 'kubevirt', 'kubevirt');
    if (!cur) throw new Error('the sandbox has no kubevirt/kubevirt CR');
    const annotations = settings ? settings.annotations : (original.metadata?.annotations ?? {});
    const next: KubeVirt = { ...cur, metadata: { ...cur.metadata, annotations }, spec: structuredClone(settings ? settings.spec : original.spec) };
    try {
      await kube.update(KUBEVIRTS, next);
      return;
    } catch (err) {
      if (attempt >= 5) throw err;
    }
  }
}

/** KubeVirt's defaulted VMI, created as virt-api would have stored it (the server assigns name-independent fields). */
export async function createVmi(kube: KubeClient, vmi: VirtualMachineInstance): Promise<VirtualMachineInstance> {
  const body = structuredClone(vmi);
  const md = body.metadata ?? {};
  for (const k of ['uid', 'resourceVersion', 'creationTimestamp', 'generation', 'managedFields'] as const) delete (md as Record<string, unknown>)[k];
  body.metadata = md;
  return kube.create(VMIS, body);
}

/** KubeVirt's pod through the same API server's defaulting and admission, persisting nothing. */
export async function dryRunPod(kc: KubeConfig, namespace: string, pod: V1Pod): Promise<V1Pod> {
  const api = kc.makeApiClient(CoreV1Api);
  return api.createNamespacedPod({ namespace, body: pod, dryRun: 'All' });
}

/** What the product did with the VMI: a launcher pod, a refusal (Synchronized=False), or nothing in time. */
export type ProductOutcome = { kind: 'pod'; pod: V1Pod } | { kind: 'refused'; reason: string; message: string } | { kind: 'none' };

/**
 * Waits for the VMI's launcher pod (labelled `kubevirt.io/created-by=<uid>`) or its refusal. A
 * `Synchronized=False` condition counts once it has held for `settleMs` without a pod (some sync
 * errors are passing: a claim still binding).
 */
export async function awaitProduct(kube: KubeClient, namespace: string, name: string, uid: string, timeoutMs: number, settleMs = 500): Promise<ProductOutcome> {
  const deadline = Date.now() + timeoutMs;
  let refusedSince: number | undefined;
  for (;;) {
    const pods = await kube.list(PODS, namespace, { labelSelector: `${CREATED_BY_LABEL}=${uid}` });
    const pod = pods.items.find((p) => (p.metadata?.ownerReferences ?? []).some((r) => r.uid === uid));
    // Read back on its own: list items carry no apiVersion/kind, a GET answers the pod as stored.
    if (pod) return { kind: 'pod', pod: (await kube.get(PODS, namespace, pod.metadata?.name ?? '')) ?? pod };
    const vmi = await kube.get(VMIS, namespace, name);
    const sync = vmi?.status?.conditions?.find((x) => x.type === VMI_CONDITION.Synchronized && x.status === 'False');
    if (sync) {
      refusedSince ??= Date.now();
      if (Date.now() - refusedSince >= settleMs) return { kind: 'refused', reason: sync.reason ?? '', message: sync.message ?? '' };
    } else refusedSince = undefined;
    if (Date.now() > deadline) return { kind: 'none' };
    await sleep(100);
  }
}
