/**
 * The template service: pure functions that render KubeVirt's pods from a VMI and the cluster
 * configuration. No I/O, deterministic; bundled into every function.
 */
export { clusterConfigFromKubeVirt, gateEnabled, DEFAULT_IMAGE_REGISTRY, DEFAULT_IMAGE_TAG } from '../config/cluster-config.ts';
export type { ClusterConfig } from '../config/cluster-config.ts';
export { memoryOverhead } from './memory-overhead.ts';
export type { MemoryOverhead, OverheadTerm } from './memory-overhead.ts';
export { renderLauncherPod } from './render-launcher-pod.ts';
export type { RenderOptions } from './render-launcher-pod.ts';
export { renderResources } from './render-resources.ts';
export type { NamespaceInfo, RenderedResources } from './render-resources.ts';
export type { PvcInfo } from './render-volumes.ts';
export { applyVmiDefaults, withStandInIdentity } from './vmi-defaults.ts';
export { PvcNotFoundError } from './errors.ts';
export { networkAnnotations, hashedPodInterfaceName, podLabels, vmiIdLabelValue } from './render-metadata.ts';
export * from '../api/quantity.ts';
export { renderTargetPod, imageIdsFromSourcePod } from './render-target-pod.ts';
export type { TargetPodOptions } from './render-target-pod.ts';
export { renderAttachmentPod, renderHotplugTriggerPod } from './render-attachment-pod.ts';
export { renderTempPod } from './render-temp-pod.ts';
export type { AttachmentVolume } from './render-attachment-pod.ts';
export { vmiFromManifest } from './vmi-from-manifest.ts';
