/**
 * A hook sidecar that runs a script from a ConfigMap: KubeVirt reads the ConfigMap when it
 * renders the launcher pod and refuses to render while it is missing (the pod would wait for
 * ever for a volume that is not there). We read it too, just before rendering.
 */
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { CONFIG_MAPS } from '../../shared/api/resources.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { requestedSidecars } from '../../shared/template/sidecars.ts';

/** KubeVirt's render error for the first sidecar ConfigMap that does not exist, or undefined. */
export async function missingSidecarConfigMap(kube: Pick<KubeClient, 'get'>, vmi: VirtualMachineInstance, config: ClusterConfig): Promise<string | undefined> {
  const namespace = vmi.metadata?.namespace ?? '';
  for (const s of requestedSidecars(vmi, config)) {
    if (!s.configMap) continue;
    if (!(await kube.get(CONFIG_MAPS, namespace, s.configMap.name))) return `configmaps "${s.configMap.name}" not found`;
  }
  return undefined;
}
