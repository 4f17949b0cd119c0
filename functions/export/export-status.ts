/**
 * The export's status, rebuilt every pass (reference §3.4): the service name, the links (filled
 * only while the exporter pod is ready), the phase and Ready condition from the pod (or the
 * source's Ready condition while there is none), then the source's own part — its condition,
 * `virtualMachineName`, `Skipped` for a source with nothing to export — and the 3 s requeue of a
 * source that has content but is not available yet. Conditions keep first-insertion order and
 * change (timestamp included) only when status, reason or message change.
 */
import { posix } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { ExportLink, VirtualMachineExport, VirtualMachineExportStatus } from '../../shared/api/export.ts';
import { updateCondition, type StorageCondition } from '../../shared/storage/conditions.ts';
import { COND, PHASE, REASON, REQUEUE_SECONDS } from './names.ts';
import { externalBase } from './external-link.ts';
import { volumeUris } from './render-pod.ts';
import { backupLinks } from './backup-source.ts';
import { hasContent, isAvailable, type CondSpec, type SourceResult } from './source.ts';

/** The status an export starts with: Pending, `Ready=False Initializing`, TTL from creation. */
export function initialStatus(ttlExpiration: string, nowIso: string): VirtualMachineExportStatus {
  return { phase: PHASE.pending, conditions: updateCondition([], COND.ready, 'False', REASON.initializing, nowIso, { compareMessage: true }), ttlExpirationTime: ttlExpiration };
}

/** Running, and every container ready (vacuously true with none). */
export const isExporterReady = (pod: V1Pod) => pod.status?.phase === 'Running' && (pod.status.containerStatuses ?? []).every((c) => c.ready);

const setCond = (list: StorageCondition[] | undefined, c: CondSpec, nowIso: string) => updateCondition(list, c.type, c.status, c.reason, nowIso, { message: c.message, compareMessage: true });

export interface StatusInput {
  readonly vme: VirtualMachineExport;
  readonly src: SourceResult;
  /** The exporter pod as this pass leaves it (a pod deleted because it finished is still shown). */
  readonly pod: V1Pod | undefined;
  readonly serviceName: string;
  /** The `kubevirt-export-ca` bundle: the internal link's cert. */
  readonly caBundle: string;
  /** Where an Ingress publishes the export proxy, and its certificate for that host (external-link.ts); undefined: no external link. */
  readonly external?: { readonly host: string; readonly cert: string } | undefined;
  readonly nowIso: string;
}

export interface StatusPlan {
  readonly status: VirtualMachineExportStatus;
  readonly requeueSeconds?: number;
}

export function planStatus(base: VirtualMachineExportStatus, input: StatusInput): StatusPlan {
  const { src, pod, nowIso } = input;
  const status: VirtualMachineExportStatus = { ...base, serviceName: input.serviceName, links: {} };
  let ready: CondSpec;
  if (!pod) {
    status.phase = PHASE.pending;
    ready = src.readyCondition;
  } else if (isExporterReady(pod)) {
    status.phase = PHASE.ready;
    ready = { type: COND.ready, status: 'True', reason: REASON.podReady, message: '' };
    status.links = { internal: internalLink(input), ...(input.external ? { external: externalLink(input, input.external) } : {}) };
  } else if (pod.status?.phase === 'Succeeded') {
    status.phase = PHASE.terminated;
    ready = { type: COND.ready, status: 'False', reason: REASON.podCompleted, message: '' };
  } else if (pod.status?.phase === 'Pending' || pod.status?.phase === undefined) {
    status.phase = PHASE.pending;
    ready = { type: COND.ready, status: 'False', reason: REASON.podPending, message: '' };
  } else {
    status.phase = PHASE.pending;
    ready = { type: COND.ready, status: 'False', reason: REASON.unknown, message: '' };
  }
  let conditions = setCond(status.conditions, ready, nowIso);
  let requeueSeconds: number | undefined;

  switch (src.kind) {
    case 'pvc':
      if (src.sourceCondition) conditions = setCond(conditions, src.sourceCondition, nowIso);
      if (!isAvailable(src) && hasContent(src)) requeueSeconds = REQUEUE_SECONDS;
      break;
    case 'vm':
      status.virtualMachineName = input.vme.spec.source.name;
      if (!hasContent(src)) status.phase = PHASE.skipped;
      if (!src.populated && src.readyCondition.reason !== REASON.vmNotFound) requeueSeconds = REQUEUE_SECONDS;
      break;
    case 'snapshot':
      if (src.virtualMachineName !== undefined) status.virtualMachineName = src.virtualMachineName;
      if (!hasContent(src)) {
        if (src.sourceCondition) conditions = setCond(conditions, src.sourceCondition, nowIso);
        if (src.sourceCondition?.reason === REASON.snapshotNoVolumes || src.sourceCondition?.reason === REASON.snapshotNotFound) status.phase = PHASE.skipped;
      } else {
        const bound = src.volumes.every((v) => v.claim.status?.phase === 'Bound');
        conditions = setCond(conditions, bound ? { type: COND.volumesCreated, status: 'True', reason: REASON.allPvcsReady, message: '' } : { type: COND.volumesCreated, status: 'False', reason: REASON.notAllPvcsReady, message: 'Not all PVCs are ready' }, nowIso);
      }
      break;
    case 'backup':
      // The backup's condition is a Ready condition: it has the last word.
      if (src.sourceCondition) conditions = setCond(conditions, src.sourceCondition, nowIso);
      if (!isAvailable(src)) requeueSeconds = REQUEUE_SECONDS;
      break;
  }
  status.conditions = conditions;
  return requeueSeconds !== undefined ? { status, requeueSeconds } : { status };
}

/** `https://` + Go's path.Join(host, uri), which drops a trailing "/" (a dir URI ends up `…/dir`); Node's join keeps it. */
const url = (host: string, uri: string) => `https://${posix.join(host, uri).replace(/\/+$/, '')}`;

function internalLink(input: StatusInput): ExportLink {
  return link(input, `${input.serviceName}.${input.vme.metadata?.namespace ?? ''}.svc`, 'internal', input.caBundle);
}

/** The same URLs under the export API path of the Ingress's host (KubeVirt's getExternalLinks). */
function externalLink(input: StatusInput, external: { host: string; cert: string }): ExportLink {
  return link(input, externalBase(external.host, input.vme.metadata?.namespace ?? '', input.vme.metadata?.name ?? ''), 'external', external.cert);
}

function link(input: StatusInput, hostAndBase: string, linkType: 'internal' | 'external', cert: string): ExportLink {
  const { vme, src } = input;
  const prefix = `${vme.metadata?.name ?? ''}-`;
  const volumes = src.volumes.map((v) => {
    const claim = v.claim.metadata?.name ?? '';
    const name = src.kind === 'snapshot' && claim.startsWith(prefix) ? claim.slice(prefix.length) : claim;
    return { name, formats: volumeUris(v).map((u) => ({ format: u.format, url: url(hostAndBase, u.uri) })) };
  });
  const manifests = [
    ...(src.kind === 'vm' || src.kind === 'snapshot' ? [{ type: 'all', url: url(hostAndBase, `/${linkType}/manifests/all`) }] : []),
    { type: 'auth-header-secret', url: url(hostAndBase, `/${linkType}/manifests/secret`) },
  ];
  const backups = src.backup ? backupLinks(src.backup, (uri) => url(hostAndBase, uri)) : [];
  // Go leaves empty lists out (omitempty).
  return { cert: cert.trim(), ...(volumes.length > 0 ? { volumes } : {}), manifests, ...(backups.length > 0 ? { backups } : {}) };
}
