/**
 * Shared helpers for template tests: load a manifest file as a defaulted VMI, render it.
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeVirt, VirtualMachineInstance } from '../../shared/api/index.ts';
import {
  applyVmiDefaults, clusterConfigFromKubeVirt, renderLauncherPod, vmiFromManifest, withStandInIdentity, type ClusterConfig,
} from '../../shared/template/index.ts';

/** The first VMI/VM in a (multi-document) YAML file, as the controller would see it, or undefined. */
export function loadVmi(path: string, config: ClusterConfig = clusterConfigFromKubeVirt()): VirtualMachineInstance | undefined {
  const docs = parseAllDocuments(readFileSync(path, 'utf8'));
  for (const d of Array.isArray(docs) ? docs : [docs]) {
    const js = d.toJS() as Record<string, unknown> | null;
    if (js && (js['kind'] === 'VirtualMachineInstance' || js['kind'] === 'VirtualMachine')) {
      return applyVmiDefaults(withStandInIdentity(vmiFromManifest(js).vmi), config);
    }
  }
  return undefined;
}

/** The compute container of a rendered pod (always first). */
export function compute(pod: V1Pod) {
  const c = pod.spec?.containers[0];
  if (!c) throw new Error('pod has no containers');
  return c;
}

export { renderLauncherPod };

/** A KubeVirt CR with `spec.configuration` only. */
export function kubevirtCr(configuration: Record<string, unknown>): KubeVirt {
  return { apiVersion: 'kubevirt.io/v1', kind: 'KubeVirt', metadata: { name: 'kubevirt', namespace: 'kubevirt' }, spec: { configuration } } as KubeVirt;
}

/** A small VMI (128Mi, no disks) edited by `edit`, then defaulted as the webhook would for `config`. */
export function fidelityVmi(edit: (v: VirtualMachineInstance) => void = () => undefined, config: ClusterConfig = clusterConfigFromKubeVirt()): VirtualMachineInstance {
  const v: VirtualMachineInstance = {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name: 'f', namespace: 'ns' },
    spec: { domain: { resources: { requests: { memory: '128Mi' } }, devices: { disks: [] } }, volumes: [] },
  };
  edit(v);
  return applyVmiDefaults(withStandInIdentity(v), config);
}
