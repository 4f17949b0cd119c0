/**
 * Host-model CPU and CPU vendor node selectors of the migration target pod (reference §b.8):
 * from the source node's labels, or — when the source pod already has them from an earlier
 * migration — copied from the source pod, on both render paths (first migration: digests from
 * the source pod's statuses; re-migration: digests from its pinned image volumes).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../../shared/api/index.ts';
import { hostModelLabelsForRemigration, renderMigrationTargetPod } from '../../../functions/migration/target-pod.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';
import { projectRoot } from '../../support/reference.ts';
import { loadVmi } from '../../template/support.ts';

const config = clusterConfigFromKubeVirt();
const vmi = loadVmi(join(projectRoot, 'test/fixtures/vmis/containerdisk-cloudinit.yaml'), config) as VirtualMachineInstance;
vmi.status = { ...vmi.status, selinuxContext: 'none', nodeName: 'node-a' };
const migration: VirtualMachineInstanceMigration = { metadata: { name: 'mig', uid: 'mig-uid' }, spec: { vmiName: vmi.metadata?.name ?? '' } };

const NODE_LABELS = {
  'kubernetes.io/hostname': 'node-a',
  'host-model-cpu.node.kubevirt.io/Skylake': 'true',
  'host-model-required-features.node.kubevirt.io/vmx': 'true',
  'cpu-vendor.node.kubevirt.io/Intel': 'true',
  'cpu-model.node.kubevirt.io/Skylake': 'true',
};
/** Selectors an earlier migration put on the pod the VMI now runs in. */
const EARLIER = { 'cpu-model-migration.node.kubevirt.io/Haswell': 'true', 'cpu-feature.node.kubevirt.io/aes': 'true' };

/** A first-time source pod: digests in its container statuses. */
function firstSource(nodeSelector: Record<string, string> = {}): V1Pod {
  return {
    spec: { containers: [], nodeSelector },
    status: { initContainerStatuses: [{ name: 'volumeroot', imageID: 'quay.io/containerdisks/fedora@sha256:abc', image: '', ready: true, restartCount: 0 }] },
  };
}

/** A source pod that was itself a migration target: images pinned in its volumes, no statuses. */
function pinnedSource(nodeSelector: Record<string, string> = {}): V1Pod {
  return { spec: { containers: [], nodeSelector, volumes: [{ name: 'root', image: { reference: 'quay.io/containerdisks/fedora@sha256:abc' } }] }, status: {} };
}

/** The CPU-related selectors of the rendered pod. */
function cpuSelectors(pod: V1Pod): Record<string, string> {
  return Object.fromEntries(Object.entries(pod.spec?.nodeSelector ?? {}).filter(([k]) => /^(cpu-model-migration|cpu-feature|cpu-vendor|host-model)/.test(k)));
}

describe('target pod: host-model CPU and vendor selectors from the source node', () => {
  const cases: ReadonlyArray<{ name: string; source: V1Pod; labels: Record<string, string>; want: Record<string, string> }> = [
    {
      name: 'first migration: model and required features from the node, vendor copied with "true"',
      source: firstSource(),
      labels: NODE_LABELS,
      want: { 'cpu-model-migration.node.kubevirt.io/Skylake': 'true', 'cpu-feature.node.kubevirt.io/vmx': 'true', 'cpu-vendor.node.kubevirt.io/Intel': 'true' },
    },
    {
      name: 'first render path, source pod already carries selectors: those are copied, not the node\'s',
      source: firstSource(EARLIER),
      labels: NODE_LABELS,
      want: { ...EARLIER, 'cpu-vendor.node.kubevirt.io/Intel': 'true' },
    },
    {
      name: 're-migration (pinned images), source pod carries selectors: copied, not the node\'s',
      source: pinnedSource(EARLIER),
      labels: NODE_LABELS,
      want: { ...EARLIER, 'cpu-vendor.node.kubevirt.io/Intel': 'true' },
    },
    {
      name: 're-migration (pinned images) without selectors on the source pod: from the node',
      source: pinnedSource(),
      labels: NODE_LABELS,
      want: { 'cpu-model-migration.node.kubevirt.io/Skylake': 'true', 'cpu-feature.node.kubevirt.io/vmx': 'true', 'cpu-vendor.node.kubevirt.io/Intel': 'true' },
    },
    { name: 'source node gone (no labels): no CPU selectors', source: firstSource(), labels: {}, want: {} },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const pod = renderMigrationTargetPod(vmi, migration, c.source, config, c.labels);
      // assert
      assert.deepEqual(cpuSelectors(pod), c.want);
    });
  }

  test('a named CPU model takes no host-model selectors, only the vendor', () => {
    // arrange
    const named = structuredClone(vmi);
    named.spec.domain.cpu = { ...named.spec.domain.cpu, model: 'Haswell' };
    // act
    const pod = renderMigrationTargetPod(named, migration, firstSource(), config, NODE_LABELS);
    // assert
    assert.deepEqual(Object.keys(cpuSelectors(pod)).filter((k) => !k.startsWith('cpu-model.')), ['cpu-vendor.node.kubevirt.io/Intel']);
  });

  test('a VMI with no CPU model (not defaulted by virt-api) takes no host-model selectors, only the vendor', () => {
    // arrange: KubeVirt adds them only for a spec that says host-model; an absent model is not one
    const bare = structuredClone(vmi);
    bare.spec.domain.cpu = { ...bare.spec.domain.cpu, model: undefined };
    // act
    const pod = renderMigrationTargetPod(bare, migration, firstSource(EARLIER), config, NODE_LABELS);
    // assert
    assert.deepEqual(cpuSelectors(pod), { 'cpu-vendor.node.kubevirt.io/Intel': 'true' }, 'no model: neither the node\'s nor the source pod\'s host-model selectors');
  });

  test('hostModelLabelsForRemigration leaves the node labels alone when the pod has no CPU selectors', () => {
    // act
    const labels = hostModelLabelsForRemigration(NODE_LABELS, pinnedSource({ 'kubevirt.io/schedulable': 'true' }));
    // assert
    assert.deepEqual(labels, NODE_LABELS);
  });
});
