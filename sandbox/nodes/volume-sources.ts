/**
 * The kubelet's view of what pod volumes come from — claims, PersistentVolumes, ConfigMaps,
 * Secrets — as shared informers, with the lookups {@link volumeProblems} reads and the wake-ups
 * that re-check a waiting pod when one of its sources appears or changes (a claim bound, a
 * ConfigMap created, a PV's claimRef set, the pod holding an exclusive volume elsewhere gone).
 */
import { plain, type NodeSideApi } from './api.ts';
import type { Informer } from './shared-informers.ts';
import type { RawList } from './watched-cache.ts';
import { isTerminalPhase, keyOf, type KubeObject, type Pod } from './objects.ts';
import type { ClaimFacts, VolumeFacts, VolumeLookups } from './pod-volumes.ts';

type Claim = KubeObject & ClaimFacts;
type Volume = KubeObject & VolumeFacts;

interface PodVolumeRef {
  persistentVolumeClaim?: { claimName?: string };
  configMap?: { name?: string };
  secret?: { secretName?: string };
  projected?: { sources?: { secret?: { name?: string } }[] };
}

const refsOf = (pod: Pod) => ((pod.spec?.volumes ?? []) as PodVolumeRef[]);

/** Index keys of the sources a pod's volumes name: `claim:ns/name`, `configmap:ns/name`, `secret:ns/name`. */
export function sourceKeysOf(pod: Pod): string[] {
  const ns = pod.metadata?.namespace ?? '';
  const out: string[] = [];
  for (const v of refsOf(pod)) {
    if (v.persistentVolumeClaim?.claimName) out.push(`claim:${ns}/${v.persistentVolumeClaim.claimName}`);
    if (v.configMap?.name) out.push(`configmap:${ns}/${v.configMap.name}`);
    if (v.secret?.secretName) out.push(`secret:${ns}/${v.secret.secretName}`);
    for (const s of v.projected?.sources ?? []) if (s.secret?.name) out.push(`secret:${ns}/${s.secret.name}`);
  }
  return out;
}

export interface VolumeSources {
  lookups: VolumeLookups;
  start(): Promise<void>;
  stop(): Promise<void>;
  restarts(): number;
}

/**
 * Starts the informers; `pods` must have the `source` index ({@link sourceKeysOf}); `wake` is
 * called with each pod that waits on a source that changed.
 */
export function volumeSources(api: NodeSideApi, pods: Informer<Pod>, wake: (pod: Pod) => void, onError?: (what: string, err: unknown) => void): VolumeSources {
  const wakeBy = (key: string) => {
    for (const p of pods.byIndex('source', key)) wake(p);
  };
  const named = (kind: string, o: KubeObject) => `${kind}:${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
  const claims: Informer<Claim> = api.informers.informer<Claim>({
    path: '/api/v1/persistentvolumeclaims',
    list: async () => plain<RawList<Claim>>(await api.core.listPersistentVolumeClaimForAllNamespaces()),
    onError: (e) => onError?.('kubelet claim informer', e),
    onEvent: (_event, c) => wakeBy(named('claim', c)),
  });
  const volumes: Informer<Volume> = api.informers.informer<Volume>({
    path: '/api/v1/persistentvolumes',
    list: async () => plain<RawList<Volume>>(await api.core.listPersistentVolume()),
    onError: (e) => onError?.('kubelet volume informer', e),
    onEvent: (_event, pv) => {
      const ref = (pv.spec?.claimRef ?? {}) as { namespace?: string; name?: string };
      if (ref.name) wakeBy(`claim:${ref.namespace ?? ''}/${ref.name}`);
    },
  });
  const configMaps: Informer<KubeObject> = api.informers.informer<KubeObject>({
    path: '/api/v1/configmaps',
    list: async () => plain<RawList<KubeObject>>(await api.core.listConfigMapForAllNamespaces({})),
    onError: (e) => onError?.('kubelet configmap informer', e),
    onEvent: (_event, cm) => wakeBy(named('configmap', cm)),
  });
  const secrets: Informer<KubeObject> = api.informers.informer<KubeObject>({
    path: '/api/v1/secrets',
    list: async () => plain<RawList<KubeObject>>(await api.core.listSecretForAllNamespaces({})),
    onError: (e) => onError?.('kubelet secret informer', e),
    onEvent: (_event, s) => wakeBy(named('secret', s)),
  });
  const all = [claims, volumes, configMaps, secrets];

  const lookups: VolumeLookups = {
    claim: (ns, name) => claims.get(ns, name),
    volume: (name) => volumes.get('', name),
    configMapExists: (ns, name) => configMaps.get(ns, name) !== undefined,
    secretExists: (ns, name) => secrets.get(ns, name) !== undefined,
    // A volume stays attached to a node while a pod there that uses it has not ended.
    usersElsewhere: (ns, claim, nodeName) =>
      pods
        .byIndex('source', `claim:${ns}/${claim}`)
        .filter((p) => p.spec?.nodeName && p.spec.nodeName !== nodeName && p.status?.phase === 'Running' && !isTerminalPhase(p.status?.phase))
        .map((p) => p.metadata?.name ?? keyOf(p)),
  };
  return {
    lookups,
    start: async () => {
      for (const i of all) await i.start();
    },
    stop: async () => {
      await Promise.all(all.map((i) => i.stop()));
    },
    restarts: () => all.reduce((n, i) => n + i.restarts, 0),
  };
}
