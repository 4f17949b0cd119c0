/**
 * The Secrets a pod's volumes need before its containers can start: a secret volume (and a
 * projected secret source) that is not `optional` blocks the pod in ContainerCreating until the
 * Secret exists, which is what the kubelet does (and what KubeVirt's export server relies on: the
 * controller creates its certificate Secret only while the pod is Pending).
 */
import type { Pod } from './objects.ts';

interface SecretVolume {
  secret?: { secretName?: string; optional?: boolean };
  projected?: { sources?: { secret?: { name?: string; optional?: boolean } }[] };
}

const volumesOf = (pod: Pod) => ((pod.spec as { volumes?: SecretVolume[] } | undefined)?.volumes ?? []);

/** Names of the Secrets the pod mounts and does not mark optional. */
export function secretNamesOf(pod: Pod): string[] {
  const names: string[] = [];
  for (const v of volumesOf(pod)) {
    if (v.secret?.secretName && v.secret.optional !== true) names.push(v.secret.secretName);
    for (const s of v.projected?.sources ?? []) if (s.secret?.name && s.secret.optional !== true) names.push(s.secret.name);
  }
  return names;
}

/** The required Secrets that do not exist (per `exists`). */
export function missingSecretsOf(pod: Pod, exists: (name: string) => boolean): string[] {
  return secretNamesOf(pod).filter((n) => !exists(n));
}
