/**
 * The containers KubeVirt's template service renders beside `compute` — hook and binding-plugin
 * sidecars, virtiofsd, container-disk containers — and DRA claims, each pinned against the value
 * it renders for the corpus case named in the test (test/differential/, docs/fidelity.md).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { clusterConfigFromKubeVirt, renderLauncherPod } from '../../shared/template/index.ts';
import { compute, fidelityVmi as vmi, kubevirtCr as kv } from './support.ts';

describe('hook sidecars and network binding plugins (corpus: hook-sidecar-*, net-binding-plugin-*)', () => {
  const hooks = (list: unknown[]) => ({ 'hooks.kubevirt.io/hookSidecars': JSON.stringify(list) });

  test('a hook sidecar: its container after compute, the shared sockets, --hook-sidecars 1', () => {
    // arrange
    const v = vmi((x) => {
      x.metadata!.annotations = hooks([{ image: 'hook:v1', imagePullPolicy: 'IfNotPresent', args: ['--version', 'v1alpha2'] }]);
    });
    // act
    const pod = renderLauncherPod(v, clusterConfigFromKubeVirt());
    // assert
    const args = compute(pod).args ?? [];
    assert.equal(args[args.indexOf('--hook-sidecars') + 1], '1');
    assert.deepEqual(pod.spec?.containers[1], {
      name: 'hook-sidecar-0',
      image: 'hook:v1',
      imagePullPolicy: 'IfNotPresent',
      args: ['--version', 'v1alpha2'],
      env: [
        { name: 'XDG_CACHE_HOME', value: '/var/run/kubevirt-private' },
        { name: 'XDG_CONFIG_HOME', value: '/var/run/kubevirt-private' },
        { name: 'XDG_RUNTIME_DIR', value: '/var/run' },
        { name: 'CONTAINER_NAME', value: 'hook-sidecar-0' },
      ],
      resources: {},
      volumeMounts: [{ name: 'hook-sidecar-sockets', mountPath: '/var/run/kubevirt-hooks', subPath: 'hook-sidecar-0' }],
      terminationMessagePolicy: 'FallbackToLogsOnError',
      securityContext: { runAsUser: 107, runAsGroup: 107, runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
    });
    assert.ok(compute(pod).volumeMounts?.some((m) => m.name === 'hook-sidecar-sockets' && m.mountPath === '/var/run/kubevirt-hooks'));
  });

  test('a ConfigMap script runs in the shim image, its volume last with mode 0755; a dedicated VMI\'s sidecars get 200m/64M', () => {
    // arrange
    const v = vmi((x) => {
      x.metadata!.annotations = hooks([{ configMap: { name: 'my-hook', key: 'run.sh', hookPath: '/usr/bin/onDefineDomain' } }]);
      x.spec.domain.cpu = { cores: 2, dedicatedCpuPlacement: true };
    });
    // act
    const pod = renderLauncherPod(v, clusterConfigFromKubeVirt());
    // assert
    const side = pod.spec?.containers[1];
    assert.equal(side?.image, 'quay.io/kubevirt/sidecar-shim:v1.9.0');
    assert.equal(side?.imagePullPolicy, undefined, 'none asked for: the API server defaults it, as for KubeVirt\'s');
    assert.deepEqual(side?.volumeMounts?.[1], { name: 'my-hook', mountPath: '/usr/bin/onDefineDomain', subPath: 'run.sh' });
    assert.deepEqual(pod.spec?.volumes?.at(-1), { name: 'my-hook', configMap: { name: 'my-hook', defaultMode: 0o755 } });
    assert.deepEqual(side?.resources, { limits: { cpu: '200m', memory: '64M' }, requests: { cpu: '200m', memory: '64M' } });
  });

  test('a binding plugin: its sidecar, its NAD in the Multus annotation, its memory overhead, device-info', () => {
    // arrange
    const config = clusterConfigFromKubeVirt(kv({ network: { binding: { mybind: { sidecarImage: 'bind:v1', networkAttachmentDefinition: 'infra/mybind-nad', downwardAPI: 'device-info', computeResourceOverhead: { requests: { memory: '100Mi' } } } } } }));
    const plain = renderLauncherPod(vmi(), config);
    const v = vmi((x) => {
      x.spec.domain.devices.interfaces = [{ name: 'default', binding: { name: 'mybind' } }];
      x.spec.networks = [{ name: 'default', pod: {} }];
    }, config);
    // act
    const pod = renderLauncherPod(v, config);
    // assert
    const side = pod.spec?.containers[1];
    assert.equal(side?.image, 'bind:v1');
    assert.deepEqual(side?.env?.slice(-2), [{ name: 'CONTAINER_NAME', value: 'hook-sidecar-0' }, { name: 'NETWORK_BINDING_PLUGIN_NAME', value: 'mybind' }]);
    assert.ok(side?.volumeMounts?.some((m) => m.name === 'network-info-annotation' && m.mountPath === '/etc/podinfo'));
    assert.ok(pod.spec?.volumes?.some((x) => x.name === 'network-info-annotation'));
    assert.equal(pod.metadata?.annotations?.['k8s.v1.cni.cncf.io/networks'], '[{"name":"mybind-nad","namespace":"infra","cni-args":{"logicNetworkName":"default"}}]');
    const overhead = (p: typeof pod) => BigInt(p.metadata?.annotations?.['kubevirt.io/memory-overhead-bytes'] ?? '0');
    assert.equal(overhead(pod) - overhead(plain), 100n * 1024n * 1024n);
  });

  test('a plugin the cluster does not configure is KubeVirt\'s render error', () => {
    // arrange
    const v = vmi((x) => {
      x.spec.domain.devices.interfaces = [{ name: 'default', binding: { name: 'nowhere' } }];
      x.spec.networks = [{ name: 'default', pod: {} }];
    });
    // act / assert
    assert.throws(() => renderLauncherPod(v, clusterConfigFromKubeVirt()), /couldn't find configuration for network binding: nowhere/);
  });
});

describe('virtiofs and containerPath (corpus: virtiofs-*, container-path-volume)', () => {
  const table: { kind: string; volume: Record<string, unknown>; shared: string; mounted: boolean; extra?: string }[] = [
    { kind: 'a ConfigMap', volume: { configMap: { name: 'cfg' } }, shared: '/var/run/kubevirt-private/config-map/fs', mounted: true },
    { kind: 'a Secret', volume: { secret: { secretName: 's' } }, shared: '/var/run/kubevirt-private/secret/fs', mounted: true },
    { kind: 'a downwardAPI volume', volume: { downwardAPI: { fields: [] } }, shared: '/var/run/kubevirt-private/downwardapi/fs', mounted: true },
    { kind: 'a service account (mounted by the API server, the token shown as root\'s)', volume: { serviceAccount: { serviceAccountName: 'sa' } }, shared: '/var/run/secrets/kubernetes.io/serviceaccount/', mounted: false, extra: '--translate-uid=host:107:0:1' },
    { kind: 'a claim', volume: { persistentVolumeClaim: { claimName: 'c' } }, shared: '/fs', mounted: true },
  ];
  for (const row of table) {
    test(`${row.kind}: a virtiofsd container sharing it, the sockets directory on compute`, () => {
      // arrange
      const v = vmi((x) => {
        x.spec.domain.devices.filesystems = [{ name: 'fs', virtiofs: {} }];
        x.spec.volumes!.push({ name: 'fs', ...row.volume });
      });
      // act
      const pod = renderLauncherPod(v, clusterConfigFromKubeVirt());
      // assert
      const c = pod.spec?.containers.find((x) => x.name === 'virtiofs-fs');
      assert.ok(c, 'the virtiofs container');
      assert.deepEqual(c.command, ['/usr/libexec/virtiofsd']);
      assert.ok(c.args?.includes(`--shared-dir=${row.shared}`));
      assert.ok(c.args?.includes('--socket-path=/var/run/kubevirt/virtiofs-containers/fs.sock'));
      if (row.extra) assert.ok(c.args?.includes(row.extra));
      assert.equal(c.volumeMounts?.some((m) => m.name === 'fs'), row.mounted);
      assert.deepEqual(c.resources, { limits: { cpu: '100m', memory: '80M' }, requests: { cpu: '10m', memory: '1M' } });
      assert.equal(pod.spec?.containers[0]?.name, 'compute', 'compute stays first');
      assert.deepEqual(compute(pod).volumeMounts?.at(-1), { name: 'virtiofs-containers', mountPath: '/var/run/kubevirt/virtiofs-containers' });
    });
  }

  test('a dedicated VMI\'s virtiofsd gets requests equal to its limits', () => {
    // arrange
    const v = vmi((x) => {
      x.spec.domain.devices.filesystems = [{ name: 'fs', virtiofs: {} }];
      x.spec.volumes!.push({ name: 'fs', configMap: { name: 'cfg' } });
      x.spec.domain.cpu = { cores: 2, dedicatedCpuPlacement: true };
    });
    // act
    const c = renderLauncherPod(v, clusterConfigFromKubeVirt()).spec?.containers.find((x) => x.name === 'virtiofs-fs');
    // assert
    assert.deepEqual(c?.resources, { limits: { cpu: '100m', memory: '80M' }, requests: { cpu: '100m', memory: '80M' } });
  });

  test('a containerPath volume: no container, no pod volume, only the sockets directory', () => {
    // arrange
    const v = vmi((x) => {
      x.spec.domain.devices.filesystems = [{ name: 'tokens', virtiofs: {} }];
      x.spec.volumes!.push({ name: 'tokens', containerPath: { path: '/var/run/secrets/tokens' } });
    });
    // act
    const pod = renderLauncherPod(v, clusterConfigFromKubeVirt());
    // assert
    assert.deepEqual(pod.spec?.containers.map((c) => c.name), ['compute']);
    assert.ok(!pod.spec?.volumes?.some((x) => x.name === 'tokens'));
    assert.ok(pod.spec?.volumes?.some((x) => x.name === 'virtiofs-containers'));
  });
});

describe('container disks with the ImageVolume gate off (corpus: containerdisk-image-volume-off*, kernel-boot-image-volume-off, kv-container-disk-resources)', () => {
  const off = (extra: Record<string, unknown> = {}) => clusterConfigFromKubeVirt(kv({ developerConfiguration: { featureGates: [], disabledFeatureGates: ['ImageVolume'] }, ...extra }));

  test('a disk container per container disk and the kernel-boot image, after compute; the binary copy and pre-pulls as init containers', () => {
    // arrange
    const config = off();
    const v = vmi((x) => {
      x.spec.domain.devices.disks!.push({ name: 'root', disk: {} });
      x.spec.volumes!.push({ name: 'root', containerDisk: { image: 'disk:v1', imagePullPolicy: 'Always' } });
      x.spec.domain.firmware = { kernelBoot: { container: { image: 'kernel:v1', kernelPath: '/boot/vmlinuz' } } };
    }, config);
    // act
    const pod = renderLauncherPod(v, config);
    // assert
    const uid = v.metadata?.uid ?? '';
    assert.deepEqual(pod.spec?.containers.map((c) => c.name), ['compute', 'volumeroot', 'volumekernel-boot-volume']);
    assert.deepEqual(pod.spec?.initContainers?.map((c) => c.name), ['guest-console-log', 'container-disk-binary', 'volumeroot-init', 'volumekernel-boot-volume-init']);
    const root = pod.spec?.containers[1];
    assert.deepEqual(root?.args, ['--copy-path', `/var/run/kubevirt-ephemeral-disks/container-disk-data/${uid}/disk_0`]);
    assert.equal(root?.imagePullPolicy, 'Always');
    assert.deepEqual(pod.spec?.containers[2]?.args, ['--copy-path', `/var/run/kubevirt-ephemeral-disks/container-disk-data/${uid}/kernel-boot`]);
    assert.deepEqual(root?.securityContext, { runAsUser: 107, runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    const bin = pod.spec?.initContainers?.[1];
    assert.deepEqual(bin?.args, ['--preserve=all', '/usr/bin/container-disk', '/init/usr/bin/container-disk']);
    assert.deepEqual(bin?.resources, { limits: { cpu: '100m', memory: '40M' }, requests: { cpu: '10m', memory: '1M' } });
    assert.ok(pod.spec?.volumes?.some((x) => x.name === 'container-disks') && !pod.spec?.volumes?.some((x) => x.image !== undefined), 'no image volumes');
  });

  test('dedicated CPUs: requests equal limits; supportContainerResources[container-disk] applies to every helper', () => {
    // arrange
    const config = off({ supportContainerResources: [{ type: 'container-disk', resources: { requests: { cpu: '5m', memory: '5M' }, limits: { cpu: '20m', memory: '50M' } } }] });
    const v = vmi((x) => {
      x.spec.domain.devices.disks!.push({ name: 'root', disk: {} });
      x.spec.volumes!.push({ name: 'root', containerDisk: { image: 'disk:v1' } });
    }, config);
    const dedicated = vmi((x) => {
      x.spec.domain.devices.disks!.push({ name: 'root', disk: {} });
      x.spec.volumes!.push({ name: 'root', containerDisk: { image: 'disk:v1' } });
      x.spec.domain.cpu = { cores: 2, dedicatedCpuPlacement: true };
    }, off());
    // act
    const pod = renderLauncherPod(v, config);
    const ded = renderLauncherPod(dedicated, off());
    // assert
    assert.deepEqual(pod.spec?.initContainers?.[1]?.resources, { limits: { cpu: '20m', memory: '50M' }, requests: { cpu: '5m', memory: '5M' } });
    assert.deepEqual(pod.spec?.containers[1]?.resources, { limits: { cpu: '20m', memory: '50M' }, requests: { cpu: '5m', 'ephemeral-storage': '50M', memory: '5M' } });
    assert.deepEqual(ded.spec?.initContainers?.[1]?.resources, { limits: { cpu: '10m', memory: '40M' }, requests: { cpu: '10m', memory: '40M' } });
  });
});

describe('DRA and utility volumes (corpus: dra-resource-claim, dra-host-device, utility-volume)', () => {
  test('DRA-backed devices: the VMI\'s claims on the pod, the requests on compute, no device-plugin resource', () => {
    // arrange
    const config = clusterConfigFromKubeVirt(kv({ developerConfiguration: { featureGates: ['HostDevices'] } }));
    const v = vmi((x) => {
      x.spec.resourceClaims = [{ name: 'gpu-claim', resourceClaimName: 'my-gpu' }, { name: 'hd', resourceClaimTemplateName: 'hd-template' }];
      x.spec.domain.devices.gpus = [{ name: 'g', claimName: 'gpu-claim', requestName: 'gpu' }, { name: 'p', deviceName: 'nvidia.com/T4' }];
      x.spec.domain.devices.hostDevices = [{ name: 'h', claimName: 'hd', requestName: 'dev' }];
    }, config);
    // act
    const pod = renderLauncherPod(v, config);
    // assert
    assert.deepEqual(pod.spec?.resourceClaims, [{ name: 'gpu-claim', resourceClaimName: 'my-gpu' }, { name: 'hd', resourceClaimTemplateName: 'hd-template' }]);
    const r = compute(pod).resources;
    assert.deepEqual(r?.claims, [{ name: 'gpu-claim', request: 'gpu' }, { name: 'hd', request: 'dev' }]);
    assert.equal(r?.limits?.['nvidia.com/T4'], '1');
    assert.ok(!Object.keys(r?.limits ?? {}).some((k) => k === '' || k === 'undefined'));
  });

  test('utility volumes are not in the launcher pod (they are attached like hotplug volumes)', () => {
    // arrange
    const v = vmi((x) => {
      x.spec.utilityVolumes = [{ name: 'util', claimName: 'util-claim' }];
    });
    // act
    const pod = renderLauncherPod(v, clusterConfigFromKubeVirt());
    // assert
    assert.ok(!pod.spec?.volumes?.some((x) => x.name === 'util'));
  });
});
