/**
 * The WaitForFirstConsumer "doppelganger" pod (reference-vm-vmi-depth §4, KubeVirt's
 * `RenderLaunchManifestNoVm`): the full launcher manifest — same `generateName`, labels, owner
 * reference, volumes (so the scheduler binds the WFFC claims), resources and node selectors — with
 * the `kubevirt.io/ephemeral-provisioning: "true"` annotation and a compute container that only
 * runs `/bin/bash -c echo "bound PVCs"` and exits 0 at once. Pure.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../api/index.ts';
import { COMPUTE_CONTAINER, EPHEMERAL_PROVISIONING_ANNOTATION } from '../api/well-known.ts';
import type { ClusterConfig } from '../config/cluster-config.ts';
import { renderLauncherPod, type RenderOptions } from './render-launcher-pod.ts';

/** The launcher arguments that KubeVirt still appends to the temporary pod's. */
const KEPT_ARGS = new Set(['--allow-emulation', '--keep-after-failure']);

/** The temporary pod of `vmi`; throws what {@link renderLauncherPod} throws. */
export function renderTempPod(vmi: VirtualMachineInstance, config: ClusterConfig, opts: RenderOptions = {}): V1Pod {
  const pod = renderLauncherPod(vmi, config, opts);
  const meta = (pod.metadata ??= {});
  meta.annotations = { ...meta.annotations, [EPHEMERAL_PROVISIONING_ANNOTATION]: 'true' };
  for (const c of pod.spec?.containers ?? []) {
    if (c.name !== COMPUTE_CONTAINER) continue;
    const kept = (c.args ?? []).filter((a) => KEPT_ARGS.has(a));
    c.command = ['/bin/bash'];
    c.args = ['-c', 'echo', 'bound PVCs', ...kept];
  }
  return pod;
}
