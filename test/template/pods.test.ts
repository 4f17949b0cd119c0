import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import {
  clusterConfigFromKubeVirt, hashedPodInterfaceName, PvcNotFoundError, renderAttachmentPod, renderHotplugTriggerPod, renderLauncherPod, renderTargetPod, vmiIdLabelValue,
} from '../../shared/template/index.ts';
import { projectRoot } from '../support/reference.ts';
import { compute, loadVmi } from './support.ts';

const config = clusterConfigFromKubeVirt();
const fixture = (f: string) => loadVmi(join(projectRoot, 'test/fixtures/vmis', f), config) as VirtualMachineInstance;

describe('launcher pod fields (reference §b.1–b.5)', () => {
  const vmi = fixture('containerdisk-cloudinit.yaml');
  const pod = renderLauncherPod(vmi, config);

  test('metadata: generateName, labels, owner reference', () => {
    assert.equal(pod.metadata?.generateName, 'virt-launcher-cd-cloudinit-');
    assert.deepEqual(pod.metadata?.labels, {
      app: 'demo', 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': '11111111-1111-4111-8111-111111111111',
      'vm.kubevirt.io/name': 'cd-cloudinit', 'vmi.kubevirt.io/id': 'cd-cloudinit',
    });
    assert.deepEqual(pod.metadata?.ownerReferences, [{
      apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'cd-cloudinit',
      uid: '11111111-1111-4111-8111-111111111111', controller: true, blockOwnerDeletion: true,
    }]);
  });

  test('pod spec: grace 60 s, launcher grace 45 s, non-root security, readiness gate, pull secret', () => {
    assert.equal(pod.spec?.terminationGracePeriodSeconds, 60);
    const args = compute(pod).args ?? [];
    assert.equal(args[args.indexOf('--grace-period-seconds') + 1], '45');
    assert.deepEqual(pod.spec?.securityContext, { fsGroup: 107, runAsUser: 107, runAsGroup: 107, runAsNonRoot: true });
    assert.deepEqual(pod.spec?.readinessGates, [{ conditionType: 'kubevirt.io/virtual-machine-unpaused' }]);
    assert.deepEqual(pod.spec?.imagePullSecrets, [{ name: 'regcred' }]);
    assert.equal(pod.spec?.automountServiceAccountToken, false);
    assert.equal(pod.spec?.restartPolicy, 'Never');
  });

  test('cloud-init secrets are mounted twice with sub-paths; the container disk is an image volume', () => {
    const mounts = compute(pod).volumeMounts ?? [];
    assert.deepEqual(mounts.filter((m) => m.name === 'cloudinit-udata').map((m) => m.mountPath),
      ['/var/run/kubevirt-private/secret/cloudinit/userdata', '/var/run/kubevirt-private/secret/cloudinit/userData']);
    assert.deepEqual(pod.spec?.volumes?.find((v) => v.name === 'root')?.image, { reference: 'quay.io/containerdisks/fedora:40', pullPolicy: 'IfNotPresent' });
    assert.equal(mounts.find((m) => m.name === 'root')?.mountPath, '/var/run/kubevirt-image-volume/disk_0');
  });

  test('nodeSelector and host-model affinity', () => {
    assert.deepEqual(pod.spec?.nodeSelector, { 'kubernetes.io/arch': 'amd64', 'kubevirt.io/schedulable': 'true', 'machine-type.node.kubevirt.io/q35': 'true' });
    assert.deepEqual(pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
      [{ matchExpressions: [{ key: 'node-labeller.kubevirt.io/obsolete-host-model', operator: 'DoesNotExist' }] }]);
  });

  test('multus annotation, ports and SR-IOV network info', () => {
    const p = renderLauncherPod(fixture('multus-sriov.yaml'), config);
    assert.deepEqual(JSON.parse(p.metadata?.annotations?.['k8s.v1.cni.cncf.io/networks'] ?? ''), [
      { name: 'blue-net', namespace: 'net', mac: '02:00:00:00:00:01', interface: hashedPodInterfaceName('blue') },
      { name: 'sriov-net', namespace: 'sriov', interface: hashedPodInterfaceName('fast') },
    ]);
    assert.match(hashedPodInterfaceName('blue'), /^pod[0-9a-f]{11}$/);
    assert.deepEqual(compute(p).ports, [{ name: 'http', containerPort: 80, protocol: 'TCP' }, { containerPort: 53, protocol: 'UDP' }]);
    assert.ok(p.spec?.volumes?.some((v) => v.name === 'network-info-annotation'));
    assert.equal(compute(p).resources?.limits?.['memory'], undefined);
  });

  test('hugepages and dedicated CPUs: cpumanager selector, hugepage volumes, forbidden feature affinity', () => {
    const p = renderLauncherPod(fixture('hugepages-dedicated.yaml'), config);
    assert.equal(p.spec?.nodeSelector?.['kubevirt.io/cpumanager'], 'true');
    assert.equal(p.spec?.nodeSelector?.['cpu-model.node.kubevirt.io/Skylake-Client'], 'true');
    assert.equal(p.spec?.nodeSelector?.['cpu-feature.node.kubevirt.io/vmx'], 'true');
    assert.equal(p.spec?.nodeSelector?.['pool'], 'fast');
    assert.ok(p.spec?.volumes?.some((v) => v.name === 'hugepages' && v.emptyDir?.medium === 'HugePages'));
    assert.deepEqual(p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
      [{ matchExpressions: [{ key: 'cpu-feature.node.kubevirt.io/pcid', operator: 'DoesNotExist' }] }]);
    assert.equal(p.spec?.priorityClassName, 'high');
    assert.equal(p.spec?.schedulerName, 'my-scheduler');
    assert.equal(p.spec?.terminationGracePeriodSeconds, 150);
    assert.deepEqual(p.spec?.tolerations, [{ key: 'dedicated', operator: 'Equal', value: 'vm', effect: 'NoSchedule' }]);
  });

  test('PVCs: block → device, RWX filesystem → SHARED_FILESYSTEM_PATHS; hotpluggable skipped; missing claim → PvcNotFoundError', () => {
    const vmi2 = fixture('pvc-datavolume.yaml');
    const p = renderLauncherPod(vmi2, config, { pvcs: { 'pvc-dv-root': { volumeMode: 'Block' }, 'data-claim': { accessModes: ['ReadWriteMany'] } } });
    assert.deepEqual(compute(p).volumeDevices, [{ name: 'rootdisk', devicePath: '/dev/rootdisk' }]);
    assert.equal(compute(p).env?.find((e) => e.name === 'SHARED_FILESYSTEM_PATHS')?.value, '/var/run/kubevirt-private/vmi-disks/data');
    assert.ok(!p.spec?.volumes?.some((v) => v.name === 'hot'));
    assert.throws(() => renderLauncherPod(vmi2, config, { pvcs: {} }), (e: unknown) => e instanceof PvcNotFoundError && e.reason === 'FailedPvcNotFound');
  });

  test('host disk, config volumes mounted only when a disk uses them, service account, probes', () => {
    const p = renderLauncherPod(fixture('hostdisk-configs.yaml'), config);
    assert.deepEqual(p.spec?.volumes?.find((v) => v.name === 'host')?.hostPath, { path: '/var/data', type: 'DirectoryOrCreate' });
    const mounts = compute(p).volumeMounts ?? [];
    assert.ok(mounts.some((m) => m.name === 'cfg' && m.mountPath === '/var/run/kubevirt-private/config-map/cfg' && m.readOnly));
    // The webhook gives every volume a disk; without one, the config volume is present but not mounted.
    assert.ok(mounts.some((m) => m.name === 'unmounted'));
    const noDisk = fixture('hostdisk-configs.yaml');
    noDisk.spec.domain.devices.disks = noDisk.spec.domain.devices.disks?.filter((d) => d.name !== 'unmounted');
    const p2 = renderLauncherPod(noDisk, config);
    assert.ok(p2.spec?.volumes?.some((v) => v.name === 'unmounted') && !compute(p2).volumeMounts?.some((m) => m.name === 'unmounted'));
    assert.equal(p.spec?.serviceAccountName, 'vm-sa');
    assert.equal(p.spec?.automountServiceAccountToken, true);
    assert.deepEqual(compute(p).livenessProbe?.exec?.command,
      ['virt-probe', '--domainName', 'demo_hostdisk-configs', '--timeoutSeconds', '5', '--command', 'cat', '--', '/tmp/healthy']);
    assert.equal(compute(p).livenessProbe?.timeoutSeconds, 6);
    assert.equal(compute(p).readinessProbe?.initialDelaySeconds, 30);
  });

  test('long VMI names get a hashed id label', () => {
    const long = 'a'.repeat(70);
    assert.match(vmiIdLabelValue(long), /^a{54}-[0-9a-f]{8}$/);
  });

  test('unsupported features are typed errors naming the field', () => {
    const v = structuredClone(vmi);
    v.spec.networks = [...(v.spec.networks ?? []), { name: 'dra-net', resourceClaim: { claimName: 'net-claim', requestName: 'nic' } }];
    assert.throws(() => renderLauncherPod(v, config), (e: unknown) => e instanceof InvalidInputError && e.reason === 'Unsupported' && e.field === `spec.networks[${v.spec.networks!.length - 1}].resourceClaim`);
  });
});

describe('migration target pod (reference §b.8)', () => {
  const vmi = fixture('containerdisk-cloudinit.yaml');
  vmi.status = { ...vmi.status, selinuxContext: 'system_u:system_r:container_t:s0:c1,c2' };
  const migration: VirtualMachineInstanceMigration = { metadata: { name: 'mig', uid: 'mig-uid' }, spec: { vmiName: vmi.metadata?.name ?? '', addedNodeSelector: { zone: 'a', 'kubevirt.io/schedulable': 'false' } } };
  const sourcePod: V1Pod = {
    spec: { containers: [] },
    status: { initContainerStatuses: [{ name: 'volumeroot', imageID: 'quay.io/containerdisks/fedora@sha256:abc', image: '', imagePullPolicy: '', ready: true, restartCount: 0 } as never] },
  };

  test('anti-affinity to the VMI, migration label/annotation, selectors merged (template wins), SELinux level, pinned image', () => {
    const pod = renderTargetPod(vmi, migration, sourcePod, config, { sourceNodeLabels: { 'host-model-cpu.node.kubevirt.io/Skylake': 'true', 'host-model-required-features.node.kubevirt.io/vmx': 'true', 'cpu-vendor.node.kubevirt.io/Intel': 'true' } });
    assert.deepEqual(pod.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution,
      [{ labelSelector: { matchLabels: { 'kubevirt.io/created-by': vmi.metadata?.uid } }, topologyKey: 'kubernetes.io/hostname' }]);
    assert.equal(pod.metadata?.labels?.['kubevirt.io/migrationJobUID'], 'mig-uid');
    assert.equal(pod.metadata?.annotations?.['kubevirt.io/migrationJobName'], 'mig');
    assert.equal(pod.spec?.nodeSelector?.['zone'], 'a');
    assert.equal(pod.spec?.nodeSelector?.['kubevirt.io/schedulable'], 'true');
    assert.equal(pod.spec?.nodeSelector?.['cpu-model-migration.node.kubevirt.io/Skylake'], 'true');
    assert.equal(pod.spec?.nodeSelector?.['cpu-feature.node.kubevirt.io/vmx'], 'true');
    assert.equal(pod.spec?.nodeSelector?.['cpu-vendor.node.kubevirt.io/Intel'], 'true');
    assert.equal(pod.spec?.securityContext?.seLinuxOptions?.level, 's0:c1,c2');
    assert.equal(pod.spec?.volumes?.find((v) => v.name === 'root')?.image?.reference, 'quay.io/containerdisks/fedora@sha256:abc');
    assert.ok(!pod.spec?.initContainers?.some((c) => c.name === 'volumeroot'), 'digest already known: no resolver init container');
  });

  test('decentralized: NotIn the source node instead of pod anti-affinity', () => {
    const pod = renderTargetPod(vmi, migration, undefined, config, { decentralizedSourceNode: 'node-a' });
    assert.equal(pod.spec?.affinity?.podAntiAffinity, undefined);
    const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
    assert.ok(terms.every((t) => t.matchExpressions?.some((e) => e.operator === 'NotIn' && e.values?.[0] === 'node-a')));
  });

  test('a source pod without a digest for a container disk is a typed error', () => {
    assert.throws(() => renderTargetPod(vmi, migration, { spec: { containers: [] }, status: {} }, config), InvalidInputError);
  });

  // KubeVirt's setTargetPodSELinuxLevel (reference-node-side §5.20), with matchSELinuxLevelOnMigration on.
  const selinuxRows: { ctx: string | undefined; level?: string; error?: RegExp }[] = [
    { ctx: undefined, error: /SELinux context not set on VMI status$/ },
    { ctx: '', error: /SELinux context not set on VMI status$/ },
    { ctx: 'garbage', error: /invalid Label/ },
    { ctx: 'none' },
    { ctx: 'system_u:system_r:container_t' },
    { ctx: 'system_u:system_r:container_t:s0:c3,c4', level: 's0:c3,c4' },
  ];
  for (const r of selinuxRows) {
    test(`selinuxContext ${JSON.stringify(r.ctx)} → ${r.error ? `refused (${r.error.source})` : `level ${r.level ?? 'unset'}`}`, () => {
      // arrange
      const v = { ...vmi, status: { ...vmi.status, selinuxContext: r.ctx } };
      // act
      const render = () => renderTargetPod(v, migration, sourcePod, config);
      // assert
      if (r.error) assert.throws(render, (e: unknown) => e instanceof InvalidInputError && e.field === 'status.selinuxContext' && r.error!.test(e.message));
      else assert.equal(render().spec?.securityContext?.seLinuxOptions?.level, r.level);
    });
  }
});

describe('migration target pod of an SR-IOV VMI (KubeVirt GenerateFromSource)', () => {
  const base = fixture('containerdisk-cloudinit.yaml');
  const vmi = {
    ...base,
    spec: {
      ...base.spec,
      domain: { ...base.spec.domain, devices: { ...base.spec.domain.devices, interfaces: [{ name: 'default', masquerade: {} }, { name: 'vf', sriov: {} }] } },
      networks: [{ name: 'default', pod: {} }, { name: 'vf', multus: { networkName: 'sriov-net' } }],
    },
    status: { ...base.status, selinuxContext: 'none' },
  } as typeof base;
  const migration: VirtualMachineInstanceMigration = { metadata: { name: 'mig', uid: 'mig-uid' }, spec: { vmiName: vmi.metadata?.name ?? '' } };
  const sourcePod = (iface: string): V1Pod => ({
    metadata: { annotations: { 'k8s.v1.cni.cncf.io/network-status': JSON.stringify([{ name: 'k8s-pod-network', interface: 'eth0', default: true }, { name: 'default/sriov-net', interface: iface }]) } },
    spec: { containers: [] },
    status: { initContainerStatuses: [{ name: 'volumeroot', imageID: 'quay.io/containerdisks/fedora@sha256:abc', image: '', imagePullPolicy: '', ready: true, restartCount: 0 } as never] },
  });
  const rows: { name: string; sourceIface: string; gate: boolean; want: string }[] = [
    { name: 'PodSecondaryInterfaceNamingUpgrade off, a source named the ordinal way → the target too', sourceIface: 'net1', gate: false, want: 'net1' },
    { name: 'PodSecondaryInterfaceNamingUpgrade off, a source with hashed names → hashed', sourceIface: hashedPodInterfaceName('vf'), gate: false, want: hashedPodInterfaceName('vf') },
    { name: 'PodSecondaryInterfaceNamingUpgrade on (beta: the default), an ordinal source → hashed', sourceIface: 'net1', gate: true, want: hashedPodInterfaceName('vf') },
  ];
  for (const r of rows) {
    test(r.name, () => {
      // arrange
      const cfg = r.gate ? config : clusterConfigFromKubeVirt({ spec: { configuration: { developerConfiguration: { disabledFeatureGates: ['PodSecondaryInterfaceNamingUpgrade'] } } } } as never);
      // act
      const pod = renderTargetPod(vmi, migration, sourcePod(r.sourceIface), cfg);
      // assert
      const networks = JSON.parse(pod.metadata?.annotations?.['k8s.v1.cni.cncf.io/networks'] ?? '[]') as { name: string; interface: string }[];
      assert.deepEqual(networks.map((n) => [n.name, n.interface]), [['sriov-net', r.want]]);
      assert.ok(pod.spec?.volumes?.some((v) => v.name === 'network-info-annotation' && v.downwardAPI?.items?.[0]?.fieldRef?.fieldPath === "metadata.annotations['kubevirt.io/network-info']"), 'the network-info downward-API volume');
    });
  }
});

describe('hotplug attachment pod (reference §b.9)', () => {
  const vmi = fixture('pvc-datavolume.yaml');
  vmi.status = { ...vmi.status, selinuxContext: 'system_u:system_r:container_t:s0:c5,c6' };
  const launcher = renderLauncherPod(vmi, config);
  launcher.metadata = { ...launcher.metadata, name: 'virt-launcher-pvc-dv-xyz12', uid: 'pod-uid' };
  launcher.spec = { ...launcher.spec!, nodeName: 'node-7', tolerations: [{ key: 'a', operator: 'Exists' }] };

  test('owner ref to the launcher, VMI annotations, node affinity, tolerations, mounts', () => {
    const pod = renderAttachmentPod([{ name: 'hot', claimName: 'hot-claim' }, { name: 'blk', claimName: 'b', claimUid: 'b-uid', volumeMode: 'Block' }], launcher, vmi, config);
    assert.equal(pod.metadata?.generateName, 'hp-volume-');
    assert.deepEqual(pod.metadata?.labels, { 'kubevirt.io': 'hotplug-disk' });
    assert.deepEqual(pod.metadata?.annotations, { 'kubevirt.io/owner-vmi-name': 'pvc-dv', 'kubevirt.io/owner-vmi-uid': vmi.metadata?.uid });
    assert.deepEqual(pod.metadata?.ownerReferences, [{ apiVersion: 'v1', kind: 'Pod', name: 'virt-launcher-pvc-dv-xyz12', uid: 'pod-uid', controller: true, blockOwnerDeletion: true }]);
    assert.deepEqual(pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
      [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-7'] }] }]);
    assert.deepEqual(pod.spec?.tolerations?.map((t) => t.key), ['a', 'node.kubernetes.io/disk-pressure', 'node.kubernetes.io/memory-pressure', 'node.kubernetes.io/network-unavailable', 'node.kubernetes.io/pid-pressure', 'node.kubernetes.io/unschedulable']);
    assert.equal(pod.spec?.terminationGracePeriodSeconds, 0);
    const c = pod.spec?.containers[0];
    assert.deepEqual(c?.command, ['/bin/sh', '-c', '/usr/bin/container-disk --copy-path /path/hp']);
    assert.deepEqual(c?.resources, { requests: { cpu: '10m', memory: '2M' }, limits: { cpu: '100m', memory: '80M' } });
    assert.equal(c?.securityContext?.seLinuxOptions?.level, 's0:c5,c6');
    assert.ok(c?.volumeMounts?.some((m) => m.name === 'hot' && m.mountPath === '/hot'));
    assert.deepEqual(c?.volumeDevices, [{ name: 'blk', devicePath: '/path/blk/b-uid' }]);
  });

  test('an unscheduled launcher or a VMI without SELinux context is a typed error', () => {
    const unscheduled = { ...launcher, spec: { ...launcher.spec!, nodeName: undefined } } as V1Pod;
    assert.throws(() => renderAttachmentPod([], unscheduled, vmi, config), (e: unknown) => e instanceof InvalidInputError && e.field === 'launcherPod.spec.nodeName');
    const noCtx = { ...vmi, status: { ...vmi.status, selinuxContext: '' } };
    assert.throws(() => renderAttachmentPod([], launcher, noCtx, config), /SELinux context/);
  });

  test("table: the SELinux level as KubeVirt's matchSELinuxLevelOfVMI sets it", () => {
    const cases: { name: string; status: Record<string, unknown>; want: string | RegExp }[] = [
      { name: 'a node without SELinux (none): s0, the default (live lane hotplug)', status: { selinuxContext: 'none' }, want: 's0' },
      { name: 'the VMI\'s level', status: { selinuxContext: 'system_u:system_r:container_t:s0:c1,c2' }, want: 's0:c1,c2' },
      { name: 'no context yet: the migration source\'s', status: { selinuxContext: '', migrationState: { sourceState: { selinuxContext: 'system_u:system_r:container_t:s0:c3,c4' } } }, want: 's0:c3,c4' },
      { name: "no context yet, the source's none: s0", status: { migrationState: { sourceState: { selinuxContext: 'none' } } }, want: 's0' },
      { name: 'a context without a level: refused', status: { selinuxContext: 'system_u:system_r' }, want: /VMI has invalid SELinux context: system_u:system_r/ },
    ];
    for (const c of cases) {
      const v = { ...vmi, status: { ...vmi.status, selinuxContext: undefined, ...c.status } } as typeof vmi;
      if (c.want instanceof RegExp) assert.throws(() => renderAttachmentPod([], launcher, v, config), c.want, c.name);
      else assert.equal(renderAttachmentPod([], launcher, v, config).spec?.containers[0]?.securityContext?.seLinuxOptions?.level, c.want, c.name);
    }
  });

  test('a volume virt-handler already uses (Ready/MountedToPod) is a pod volume, not mounted again', () => {
    // act
    const pod = renderAttachmentPod([{ name: 'hot', claimName: 'hot-claim', mounted: true }, { name: 'new', claimName: 'n' }], launcher, vmi, config);
    // assert
    assert.deepEqual(pod.spec?.volumes?.map((v) => v.name), ['hotplug-disks', 'hot', 'new']);
    assert.deepEqual(pod.spec?.containers[0]?.volumeMounts?.map((m) => m.name), ['hotplug-disks', 'new']);
  });

  test('table: the WFFC trigger pod — annotated, exits at once, pod affinity to the launcher, the claim at /pvc or as a block device', () => {
    const cases = [
      { name: 'filesystem', volume: { name: 'w', claimName: 'w-claim' }, mount: [{ name: 'w', mountPath: '/pvc' }], device: undefined, runAsUser: undefined },
      { name: 'block', volume: { name: 'w', claimName: 'w-claim', claimUid: 'u', volumeMode: 'Block' as const }, mount: undefined, device: [{ name: 'w', devicePath: '/dev/hotplugblockdevice' }], runAsUser: 0 },
    ];
    for (const c of cases) {
      // act
      const pod = renderHotplugTriggerPod(c.volume, launcher, vmi, config);
      // assert
      assert.equal(pod.metadata?.generateName, 'hp-volume-', c.name);
      assert.equal(pod.metadata?.annotations?.['kubevirt.io/ephemeral-provisioning'], 'true', c.name);
      assert.deepEqual(pod.metadata?.ownerReferences?.map((r) => [r.kind, r.uid]), [['Pod', 'pod-uid']], c.name);
      assert.deepEqual(pod.spec?.containers[0]?.command, ['/bin/bash', '-c', 'exit', '0'], c.name);
      assert.deepEqual(pod.spec?.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution, [{ labelSelector: { matchLabels: launcher.metadata?.labels }, topologyKey: 'kubernetes.io/hostname' }], c.name);
      assert.deepEqual(pod.spec?.tolerations, [{ key: 'a', operator: 'Exists' }], `${c.name}: tolerations copied verbatim`);
      assert.deepEqual(pod.spec?.volumes, [{ name: 'w', persistentVolumeClaim: { claimName: 'w-claim' } }], c.name);
      assert.deepEqual(pod.spec?.containers[0]?.volumeMounts, c.mount, c.name);
      assert.deepEqual(pod.spec?.containers[0]?.volumeDevices, c.device, c.name);
      assert.equal(pod.spec?.securityContext?.runAsUser, c.runAsUser, c.name);
    }
  });
});
