/**
 * Which export keys an event concerns (reference §3.1): an export's own adds and updates (deletes
 * are ignored: its children go with it); its pod's and service's, through their controller
 * reference; and the objects exports name as their source — a claim, a VirtualMachineSnapshot, a
 * VM, a VirtualMachineBackup — through an index of every export's source. A VMI maps through the
 * VM that controls it, or, without one, through the claims it mounts. A change of the KubeVirt CR's
 * certificate rotation concerns every export. The index holds each export's source reference,
 * nothing else.
 *
 * Ours, not KubeVirt's: an Ingress in KubeVirt's namespace that routes (or routed) to the export
 * proxy concerns every export, so a new or changed Ingress shows in the external links at once.
 * KubeVirt keeps Ingresses in a store without handlers; its exports see a new one on their next
 * pass. The mapper remembers the names of the Ingresses that route to the proxy (to wake on the one
 * that stops doing so) and KubeVirt's namespace (from the KubeVirt CR's events; `kubevirt` until
 * one is seen). Routes are not watched: clusters without OpenShift's group cannot watch them.
 */
import { isDeepStrictEqual } from 'node:util';
import type { EventMapper, KeyTarget, WatchedObject } from '../../shared/relay/route.ts';
import { EXPORT_API_VERSION, EXPORT_SERVICE_LABEL, EXPORTER_LABEL_KEY, EXPORTER_LABEL_VALUE, KIND_EXPORT } from './names.ts';
import { VM_EXPORTS, PODS, SERVICES, PVCS, VM_SNAPSHOTS, VMS, VMIS, KUBEVIRTS, VM_BACKUPS, INGRESSES } from '../../shared/api/resources.ts';
import { ingressHost, type IngressLike } from './external-link.ts';
import { defineWakes } from '../../shared/reconcile/define-controller.ts';

type SourceRef = { apiGroup?: string | null; kind?: string; name?: string };

/** Which index bucket a source reference falls in (KubeVirt's export indexers: the group "v1" is accepted for claims). */
function bucketOf(ref: SourceRef): string | undefined {
  const g = ref.apiGroup ?? '';
  if (ref.kind === 'PersistentVolumeClaim' && (g === '' || g === 'v1')) return `pvc/${ref.name ?? ''}`;
  if (g === 'snapshot.kubevirt.io' && ref.kind === 'VirtualMachineSnapshot') return `vmsnapshot/${ref.name ?? ''}`;
  if (g === 'kubevirt.io' && ref.kind === 'VirtualMachine') return `vm/${ref.name ?? ''}`;
  if (g === 'backup.kubevirt.io' && ref.kind === 'VirtualMachineBackup') return `backup/${ref.name ?? ''}`;
  return undefined;
}

/** Export names by namespace and source bucket. */
export class ExportSourceIndex {
  readonly #byNamespace = new Map<string, Map<string, string>>(); // export name → bucket

  set(ns: string, name: string, ref: SourceRef | undefined): void {
    const bucket = ref ? bucketOf(ref) : undefined;
    let m = this.#byNamespace.get(ns);
    if (!bucket) return this.delete(ns, name);
    if (!m) this.#byNamespace.set(ns, (m = new Map()));
    m.set(name, bucket);
  }

  delete(ns: string, name: string): void {
    const m = this.#byNamespace.get(ns);
    m?.delete(name);
    if (m?.size === 0) this.#byNamespace.delete(ns);
  }

  exportsOf(ns: string, bucket: string): string[] {
    return [...(this.#byNamespace.get(ns) ?? [])].filter(([, b]) => b === bucket).map(([n]) => n);
  }

  all(): { ns: string; name: string }[] {
    return [...this.#byNamespace].flatMap(([ns, m]) => [...m.keys()].map((name) => ({ ns, name })));
  }
}

const target = (ns: string, name: string): KeyTarget => ({ controller: 'export', key: `${ns}/${name}` });

function ownerExport(obj: WatchedObject): string | undefined {
  return obj.metadata?.ownerReferences?.find((r) => r.controller && r.kind === KIND_EXPORT && r.apiVersion === EXPORT_API_VERSION)?.name;
}

/** The VMI's claims: its PVC and DataVolume volumes. */
function vmiClaims(obj: WatchedObject): string[] {
  const volumes = (obj.spec?.volumes as { persistentVolumeClaim?: { claimName?: string }; dataVolume?: { name?: string } }[] | undefined) ?? [];
  return volumes.flatMap((v) => [v.persistentVolumeClaim?.claimName, v.dataVolume?.name].filter((c): c is string => !!c));
}

/** The export controller's mapper, with its own index. */
export function exportMapper(): EventMapper {
  const idx = new ExportSourceIndex();
  let kubevirtNamespace = 'kubevirt';
  const proxyIngresses = new Set<string>(); // names, in KubeVirt's namespace, that route to the proxy
  return (kind, type, obj, old) => {
    const ns = obj.metadata?.namespace ?? '';
    const name = obj.metadata?.name ?? '';
    const byBucket = (bucket: string) => idx.exportsOf(ns, bucket).map((n) => target(ns, n));
    switch (kind) {
      case KIND_EXPORT:
        if (type === 'DELETED') {
          idx.delete(ns, name);
          return [];
        }
        idx.set(ns, name, obj.spec?.source as SourceRef | undefined);
        return [target(ns, name)];
      case 'Pod':
      case 'Service': {
        const owner = ownerExport(obj);
        return owner ? [target(ns, owner)] : [];
      }
      case 'PersistentVolumeClaim':
        return byBucket(`pvc/${name}`);
      case 'VirtualMachineSnapshot':
        return byBucket(`vmsnapshot/${name}`);
      case 'VirtualMachine':
        return byBucket(`vm/${name}`);
      case 'VirtualMachineBackup':
        return byBucket(`backup/${name}`);
      case 'Ingress': {
        if (ns !== kubevirtNamespace) return [];
        const routed = proxyIngresses.has(name);
        const routes = type !== 'DELETED' && ingressHost(obj as IngressLike) !== '';
        if (routes) proxyIngresses.add(name);
        else proxyIngresses.delete(name);
        // A relist wakes only for a change the watch missed (a new version of the object).
        if (type === 'RELIST' && old?.metadata?.resourceVersion === obj.metadata?.resourceVersion) return [];
        return routes || routed ? idx.all().map((e) => target(e.ns, e.name)) : [];
      }
      case 'VirtualMachineInstance': {
        const vm = obj.metadata?.ownerReferences?.find((r) => r.controller && r.kind === 'VirtualMachine' && r.apiVersion === 'kubevirt.io/v1')?.name;
        if (vm) return byBucket(`vm/${vm}`);
        return vmiClaims(obj).flatMap((c) => byBucket(`pvc/${c}`));
      }
      case 'KubeVirt': {
        if (type !== 'DELETED' && ns) kubevirtNamespace = ns;
        const strategy = (o: WatchedObject | undefined) => o?.spec?.certificateRotateStrategy;
        if (type !== 'MODIFIED' || !old || isDeepStrictEqual(strategy(old), strategy(obj))) return [];
        return idx.all().map((e) => target(e.ns, e.name));
      }
      default:
        return [];
    }
  };
}

/** What wakes the export controller's keys. */
export const exportWakes = defineWakes({ controller: 'export', watches: [
    { res: VM_EXPORTS },
    { res: PODS, labelSelector: EXPORT_SERVICE_LABEL },
    { res: SERVICES, labelSelector: `${EXPORTER_LABEL_KEY}=${EXPORTER_LABEL_VALUE}` },
    { res: PVCS },
    { res: VM_SNAPSHOTS },
    { res: VMS },
    { res: VMIS },
    { res: KUBEVIRTS },
    { res: VM_BACKUPS },
    { res: INGRESSES },
  ], mapper: exportMapper });
