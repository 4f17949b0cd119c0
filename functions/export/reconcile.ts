/**
 * KubeVirt's VirtualMachineExport controller as one stateless reconcile
 * (reference-snapshot-export-backup.md §3): observe the export and its source → service → token
 * Secret → exporter pod (and the VM manifest ConfigMap) → pod upkeep (its certificate Secret
 * while Pending; TTL, a finished pod, changed certificate parameters, a source gone unavailable)
 * → status, then the fixed 3 s requeue of a source that has content but is not available yet.
 * There is no timer for the TTL: the exporter's DEADLINE ending the pod brings the key back.
 */

import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineExport, VirtualMachineExportStatus } from '../../shared/api/export.ts';
import { CONFIG_MAPS, PODS, SECRETS, SERVICES, VM_EXPORTS } from '../../shared/api/resources.ts';
import { parseDurationMs } from '../../shared/api/go-duration.ts';
import { TransientError } from '../../shared/errors.ts';
import { AlreadyExistsError } from '../../shared/kube/errors.ts';
import { isPodFinal } from '../../shared/predicates/pods.ts';
import { splitKey } from '../../shared/queue/message.ts';
import { done, requeueAfter, type Outcome, type ReconcileContext } from '../../shared/reconcile/outcome.ts';
import { conditionOf } from '../../shared/storage/conditions.ts';
import { issueCertificate } from '../../shared/storage/x509.ts';
import type { ExportDeps } from './deps.ts';
import { initialStatus, isExporterReady, planStatus } from './export-status.ts';
import { renderManifestConfigMap } from './manifest.ts';
import { readCluster, readManifestVm, readSource, type ClusterView } from './observe.ts';
import { readExternal } from './read-external.ts';
import { CERT_PARAMS_ANNOTATION, COND, DEFAULT_TTL_MS, EVENT, EXPORT_API_VERSION, EXPORT_CA, KIND_EXPORT, manifestConfigMapNameOf, podNameOf, REASON, serviceNameOf, tokenSecretNameOf } from './names.ts';
import { randomString, renderCertSecret, renderService, renderTokenSecret } from './render-objects.ts';
import { certParamsAnnotation, certParamsOf, certSecretNameOfPod, renderExporterPod, rfc3339 } from './render-pod.ts';
import { hasContent, isAvailable, sourceKindOf, type SourceResult } from './source.ts';
import { NAME_ALPHABET } from '../../shared/api/random-name.ts';
import { eventRecorder } from '../../shared/reconcile/events.ts';
import { EVENT_COMPONENT } from '../../shared/reconcile/event-components.ts';
import { writeStatus } from '../../shared/reconcile/write-status.ts';

/** Reconciles the export named by `key` (`namespace/name`). */
export async function reconcileExport(key: string, deps: ExportDeps, ctx: ReconcileContext = {}): Promise<Outcome> {
  const { namespace, name } = splitKey(key);

  // observe: a missing or deleting export is a no-op (its children go by owner references)
  const vme = await deps.kube.get(VM_EXPORTS, namespace, name, { resourceVersion: ctx.minResourceVersion });
  if (!vme || vme.metadata?.deletionTimestamp) return done;
  const kind = sourceKindOf(vme.spec.source);
  if (!kind) return done; // a source this controller does not export: no status at all (§3.2)
  const nowMs = deps.now();
  const nowIso = rfc3339(nowMs);
  const base: VirtualMachineExportStatus = vme.status ?? initialStatus(ttlExpiration(vme), nowIso);
  const ttlMs = Date.parse(base.ttlExpirationTime ?? ttlExpiration(vme));
  const cluster = await readCluster(deps);
  const src = await readSource(kind, vme, cluster, deps);
  const ready = isAvailable(src) && hasContent(src);

  // 1. service
  await ensureService(vme, deps);

  // 2. token Secret
  const status: VirtualMachineExportStatus = { ...base };
  if (vme.spec.tokenSecretRef) status.tokenSecretRef = vme.spec.tokenSecretRef;
  else if (ready) {
    status.tokenSecretRef ??= tokenSecretNameOf(name);
    await ensureTokenSecret(vme, status.tokenSecretRef, deps);
  }

  // 3. exporter pod
  let pod: V1Pod | undefined = await deps.kube.get(PODS, namespace, podNameOf(name));
  if (!pod && ready) pod = await createPod(vme, src, status.tokenSecretRef ?? tokenSecretNameOf(name), cluster, nowMs, ttlMs, deps);

  // 4. pod upkeep
  if (pod) {
    if (pod.status?.phase === undefined || pod.status.phase === 'Pending') await ensureCertSecret(vme, pod, cluster, nowMs, deps);
    if (isAvailable(src)) {
      if (!pod.metadata?.deletionTimestamp) {
        if (nowMs >= ttlMs) {
          // The TTL is up: the export goes, and everything it owns with it.
          await deps.kube.delete(VM_EXPORTS, namespace, name, { preconditions: { uid: vme.metadata?.uid ?? '' } });
          return done;
        }
        if (isPodFinal(pod)) {
          await deletePod(pod, deps);
          await event(deps, vme, 'Warning', EVENT.podFailedOrCompleted, `Exporter pod ${namespace}/${pod.metadata?.name ?? ''} is in phase ${pod.status?.phase ?? ''}`);
        } else if (pod.metadata?.annotations?.[CERT_PARAMS_ANNOTATION] !== certParamsAnnotation(certParamsOf(cluster.kubevirt))) {
          await deletePod(pod, deps);
          await event(deps, vme, 'Warning', EVENT.certParamsChanged, 'Exporter TLS certificate parameters updated');
        }
      }
    } else {
      // Paused: the source is in use or not populated; the pod counts as absent from here on.
      if (!pod.metadata?.deletionTimestamp) {
        await deletePod(pod, deps);
        await event(deps, vme, 'Warning', EVENT.paused, src.sourceCondition?.message ?? '');
      }
      pod = undefined;
    }
  }

  // status
  // The external link only while the exporter serves (links are filled only then): the Ingress or Route read then.
  const external = pod && isExporterReady(pod) ? await readExternal(deps.kube, cluster.namespace, deps.now()) : undefined;
  const plan = planStatus(status, { vme, src, pod, serviceName: serviceNameOf(name), caBundle: cluster.caBundle, nowIso, external });
  await writeStatus(deps.kube, VM_EXPORTS, vme, plan.status);
  await pvcNotFoundEvent(vme, plan.status, deps);
  return plan.requeueSeconds !== undefined ? requeueAfter(Math.max(0.05, plan.requeueSeconds / (deps.clockSpeed ?? 1)), 'export source has content but is not available yet') : done;
}

/** creationTimestamp + (spec.ttlDuration or 2 h), RFC 3339. */
function ttlExpiration(vme: VirtualMachineExport): string {
  const ttl = (vme.spec.ttlDuration !== undefined ? parseDurationMs(vme.spec.ttlDuration) : undefined) ?? DEFAULT_TTL_MS;
  return rfc3339(Date.parse(String(vme.metadata?.creationTimestamp ?? '')) + ttl);
}

/** Creates `obj` unless it exists; true when this call created it. */
async function createIfMissing(create: () => Promise<unknown>): Promise<boolean> {
  try {
    await create();
    return true;
  } catch (err) {
    if (err instanceof AlreadyExistsError) return false;
    throw err;
  }
}

async function ensureService(vme: VirtualMachineExport, deps: ExportDeps): Promise<void> {
  const ns = vme.metadata?.namespace ?? '';
  const svcName = serviceNameOf(vme.metadata?.name ?? '');
  if (await deps.kube.get(SERVICES, ns, svcName)) return;
  if (await createIfMissing(() => deps.kube.create(SERVICES, renderService(vme)))) await event(deps, vme, 'Normal', EVENT.serviceCreated, `Created service ${ns}/${svcName}`);
}

async function ensureTokenSecret(vme: VirtualMachineExport, secretName: string, deps: ExportDeps): Promise<void> {
  const ns = vme.metadata?.namespace ?? '';
  if (await deps.kube.get(SECRETS, ns, secretName)) return;
  if (await createIfMissing(() => deps.kube.create(SECRETS, renderTokenSecret(vme, secretName)))) await event(deps, vme, 'Normal', EVENT.secretCreated, `Created default secret ${ns}/${secretName}`);
}

async function createPod(vme: VirtualMachineExport, src: SourceResult, tokenSecretName: string, cluster: ClusterView, nowMs: number, ttlMs: number, deps: ExportDeps): Promise<V1Pod> {
  const ns = vme.metadata?.namespace ?? '';
  const name = vme.metadata?.name ?? '';
  let manifestConfigMap: string | undefined;
  if ((src.kind === 'vm' || src.kind === 'snapshot') && src.vm) {
    manifestConfigMap = manifestConfigMapNameOf(name);
    const { vm, claims } = await readManifestVm(src.vm, cluster, deps);
    const external = await readExternal(deps.kube, cluster.namespace, deps.now());
    const cm = renderManifestConfigMap(vme, { vm, claims, internalHost: `${serviceNameOf(name)}.${ns}.svc`, caBundle: cluster.caBundle.trim(), external });
    if (await createIfMissing(() => deps.kube.create(CONFIG_MAPS, cm))) await event(deps, vme, 'Normal', EVENT.manifestCreated, `Created exporter data manifest ${ns}/${manifestConfigMap}`);
  }
  const want = renderExporterPod(vme, src, {
    image: exporterImage(cluster),
    tokenSecretName,
    certSecretName: `secret-${randomString(10, NAME_ALPHABET)}`,
    certParams: certParamsOf(cluster.kubevirt),
    nowMs,
    ttlExpirationMs: ttlMs,
    ...(manifestConfigMap ? { manifestConfigMap } : {}),
  });
  try {
    const pod = await deps.kube.create(PODS, want);
    await event(deps, vme, 'Normal', EVENT.podCreated, `Created exporter pod ${ns}/${want.metadata?.name ?? ''}`);
    return pod;
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
    const pod = await deps.kube.get(PODS, ns, want.metadata?.name ?? '');
    if (!pod) throw new TransientError('ExporterPodConflict', `exporter pod ${ns}/${want.metadata?.name ?? ''} exists but cannot be read`);
    return pod;
  }
}

/** virt-exportserver of the deployed KubeVirt (registry and tag from its CR). */
function exporterImage(cluster: ClusterView): string {
  const spec = cluster.kubevirt?.spec as { imageRegistry?: string; imageTag?: string } | undefined;
  const status = cluster.kubevirt?.status as { observedKubeVirtVersion?: string } | undefined;
  return `${spec?.imageRegistry ?? 'quay.io/kubevirt'}/virt-exportserver:${spec?.imageTag ?? status?.observedKubeVirtVersion ?? 'latest'}`;
}

/** The serving certificate of a Pending exporter pod, signed by `kubevirt-export-ca`, owned by the pod. */
async function ensureCertSecret(vme: VirtualMachineExport, pod: V1Pod, cluster: ClusterView, nowMs: number, deps: ExportDeps): Promise<void> {
  const ns = pod.metadata?.namespace ?? '';
  const secretName = certSecretNameOfPod(pod);
  if (!secretName || (await deps.kube.get(SECRETS, ns, secretName))) return;
  const ca = await deps.kube.get(SECRETS, cluster.namespace, EXPORT_CA);
  const crt = ca?.data?.['tls.crt'];
  const key = ca?.data?.['tls.key'];
  if (!crt || !key) throw new TransientError('ExportCaMissing', `the export CA ${cluster.namespace}/${EXPORT_CA} is not published yet`);
  const svc = serviceNameOf(vme.metadata?.name ?? '');
  const params = certParamsOf(cluster.kubevirt);
  const cert = issueCertificate({
    caCertPem: Buffer.from(crt, 'base64').toString('utf8'),
    caKeyPem: Buffer.from(key, 'base64').toString('utf8'),
    commonName: `${svc}.${ns}.svc`,
    dnsNames: [svc, `${svc}.${ns}`, `${svc}.${ns}.svc`, `${svc}.${ns}.svc.cluster.local`],
    usage: 'server',
    notBeforeMs: nowMs - 60_000,
    notAfterMs: nowMs + params.durationMs,
  });
  if (await createIfMissing(() => deps.kube.create(SECRETS, renderCertSecret(pod, secretName, cert)))) await event(deps, vme, 'Normal', EVENT.secretCreated, 'Created exporter pod secret');
}

async function deletePod(pod: V1Pod, deps: ExportDeps): Promise<void> {
  await deps.kube.delete(PODS, pod.metadata?.namespace ?? '', pod.metadata?.name ?? '', { preconditions: { uid: pod.metadata?.uid ?? '' } });
}

/**
 * Ours, not KubeVirt's (it only sets the condition): a Warning when an export of a claim first
 * finds the claim missing, so the bad input is visible in `kubectl get events` as well.
 */
async function pvcNotFoundEvent(vme: VirtualMachineExport, status: VirtualMachineExportStatus, deps: ExportDeps): Promise<void> {
  const now = conditionOf(status.conditions, COND.pvcReady);
  const before = conditionOf(vme.status?.conditions, COND.pvcReady);
  if (now?.reason === REASON.pvcNotFound && before?.reason !== REASON.pvcNotFound) await event(deps, vme, 'Warning', EVENT.pvcNotFound, now.message ?? '');
}

/** Events about the export (best effort, shared/reconcile/events.ts). */
const event = eventRecorder(EXPORT_API_VERSION, KIND_EXPORT, EVENT_COMPONENT.export);
