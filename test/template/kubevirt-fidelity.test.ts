/**
 * Renderer rules the differential corpus (test/differential/, docs/fidelity.md) found we had
 * wrong, each pinned here against the value KubeVirt's own template service renders for the
 * corpus case named in the test, so the rule holds without the sandbox or the oracle.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Probe } from '../../shared/api/index.ts';
import { addQuantity, formatQuantity, parseQuantity, quantityOf, subQuantity } from '../../shared/api/quantity.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import { clusterConfigFromKubeVirt, renderLauncherPod } from '../../shared/template/index.ts';
import { compute, fidelityVmi as vmi, kubevirtCr as kv } from './support.ts';

describe('probes (corpus: probe-*)', () => {
  const table: { kind: string; probe: Probe; timeout: number; exec: boolean }[] = [
    { kind: 'HTTP keeps its timeout', probe: { httpGet: { port: 80 }, timeoutSeconds: 3 }, timeout: 3, exec: false },
    { kind: 'TCP keeps its timeout', probe: { tcpSocket: { port: 22 }, timeoutSeconds: 2 }, timeout: 2, exec: false },
    { kind: 'HTTP without a timeout: 1', probe: { httpGet: { port: 8080 } }, timeout: 1, exec: false },
    { kind: 'exec: one second more, for virt-probe', probe: { exec: { command: ['cat', '/tmp/ok'] }, timeoutSeconds: 5 }, timeout: 6, exec: true },
    { kind: 'guest-agent ping: one second more', probe: { guestAgentPing: {}, timeoutSeconds: 4 }, timeout: 5, exec: true },
  ];
  for (const row of table) {
    test(row.kind, () => {
      // arrange
      const v = vmi((x) => {
        x.spec.readinessProbe = row.probe;
      });
      // act
      const p = compute(renderLauncherPod(v, clusterConfigFromKubeVirt())).readinessProbe;
      // assert
      assert.equal(p?.timeoutSeconds, row.timeout);
      assert.equal(p?.exec !== undefined, row.exec);
    });
  }
});

test('the sysprep volume is mounted read-only (corpus: sysprep-configmap, sysprep-secret)', () => {
  // arrange
  const v = vmi((x) => {
    x.spec.domain.devices.disks!.push({ name: 'sysprep', cdrom: { bus: 'sata' } });
    x.spec.volumes!.push({ name: 'sysprep', sysprep: { configMap: { name: 'unattend' } } });
  });
  // act
  const m = compute(renderLauncherPod(v, clusterConfigFromKubeVirt())).volumeMounts?.find((x) => x.name === 'sysprep');
  // assert
  assert.deepEqual(m, { name: 'sysprep', mountPath: '/var/run/kubevirt-private/sysprep/sysprep', readOnly: true });
});

test('Velero hook commands are formatted as KubeVirt formats them (corpus: every case)', () => {
  // act
  const a = renderLauncherPod(vmi(), clusterConfigFromKubeVirt()).metadata?.annotations ?? {};
  // assert
  assert.equal(a['pre.hook.backup.velero.io/command'], '["/usr/bin/virt-freezer", "--freeze", "--name", "f", "--namespace", "ns"]');
  assert.equal(a['post.hook.backup.velero.io/command'], '["/usr/bin/virt-freezer", "--unfreeze", "--name", "f", "--namespace", "ns"]');
});

describe('backend storage (corpus: tpm-persistent, efi-persistent, tpm-efi-persistent, cbt-enabled)', () => {
  test('the claim volume has no readOnly: false; the mounts come in KubeVirt\'s order', () => {
    // arrange
    const v = vmi((x) => {
      x.spec.domain.devices.tpm = { persistent: true };
      x.spec.domain.firmware = { bootloader: { efi: { persistent: true, secureBoot: false } } };
    });
    // act
    const pod = renderLauncherPod(v, clusterConfigFromKubeVirt(), { backendPvc: 'state' });
    // assert
    assert.deepEqual(pod.spec?.volumes?.find((x) => x.name === 'vm-state'), { name: 'vm-state', persistentVolumeClaim: { claimName: 'state' } });
    const paths = compute(pod).volumeMounts?.map((m) => m.mountPath).filter((p) => /backend-storage|libvirt/.test(p));
    assert.deepEqual(paths, [
      '/var/run/libvirt',
      '/run/kubevirt-private/backend-storage-meta',
      '/var/run/kubevirt-private/libvirt',
      '/var/run/kubevirt-private/libvirt/qemu',
      '/var/run/kubevirt-private/libvirt/qemu/swtpm',
      '/var/run/kubevirt-private/libvirt/qemu/nvram',
    ]);
  });

  test('changed block tracking mounts its overlays from the claim', () => {
    // arrange
    const v = vmi();
    (v as { status?: unknown }).status = { ...v.status, changedBlockTracking: { state: 'Enabled' } };
    // act
    const mounts = compute(renderLauncherPod(v, clusterConfigFromKubeVirt(), { backendPvc: 'state' })).volumeMounts ?? [];
    // assert
    assert.deepEqual(mounts.find((m) => m.subPath === 'cbt'), { name: 'vm-state', mountPath: '/var/run/kubevirt-private/libvirt/qemu/cbt', subPath: 'cbt' });
  });
});

describe('quantities keep the format KubeVirt\'s arithmetic gives them (corpus: hugepages-guest, hugepages-limit)', () => {
  test('a zero first operand takes the second\'s format, as Go\'s Quantity.Add/Sub', () => {
    assert.equal(formatQuantity(addQuantity(quantityOf(0), parseQuantity('512Mi'))), '512Mi');
    assert.equal(formatQuantity(subQuantity(quantityOf(0), parseQuantity('1Gi'))), '-1Gi');
    assert.equal(formatQuantity(addQuantity(parseQuantity('1G'), parseQuantity('1Mi'))), '1001048576');
  });

  test('hugepages: the request above the guest plus the overhead, in the request\'s binary format', () => {
    // arrange
    const v = vmi((x) => {
      x.spec.domain.memory = { hugepages: { pageSize: '2Mi' }, guest: '1Gi' };
      x.spec.domain.resources = { requests: { memory: '1536Mi' } };
    });
    // act
    const r = compute(renderLauncherPod(v, clusterConfigFromKubeVirt())).resources;
    // assert
    assert.equal(r?.requests?.['memory'], '803Mi');
    assert.equal(r?.requests?.['hugepages-2Mi'], '1Gi');
  });
});

describe('node selection', () => {
  test('SEV-SNP needs an SEV node too (corpus: sev-snp)', () => {
    // arrange
    const v = vmi((x) => {
      x.spec.domain.launchSecurity = { snp: {} };
    });
    // act
    const sel = renderLauncherPod(v, clusterConfigFromKubeVirt()).spec?.nodeSelector ?? {};
    // assert
    assert.equal(sel['kubevirt.io/sev'], 'true');
    assert.equal(sel['kubevirt.io/sev-snp'], 'true');
    assert.equal(sel['kubevirt.io/sev-es'], undefined);
  });

  const tsc: { name: string; policy: string; hz: number | undefined; want: boolean }[] = [
    { name: 'invtsc required with a hinted frequency: pinned', policy: 'require', hz: 2400000000, want: true },
    { name: 'invtsc forced: pinned', policy: 'force', hz: 2400000000, want: true },
    { name: 'invtsc optional: not pinned', policy: 'optional', hz: 2400000000, want: false },
    { name: 'no hinted frequency: not pinned', policy: 'require', hz: undefined, want: false },
  ];
  for (const row of tsc) {
    test(`TSC frequency selector (corpus: cpu-tsc-frequency): ${row.name}`, () => {
      // arrange
      const v = vmi((x) => {
        x.spec.domain.cpu = { features: [{ name: 'invtsc', policy: row.policy }] };
      });
      if (row.hz !== undefined) v.status = { ...v.status, topologyHints: { tscFrequency: row.hz } };
      // act
      const sel = renderLauncherPod(v, clusterConfigFromKubeVirt()).spec?.nodeSelector ?? {};
      // assert
      assert.equal(sel['scheduling.node.kubevirt.io/tsc-frequency-2400000000'], row.want ? 'true' : undefined);
    });
  }

  test('cross-architecture: a preferred affinity to the VMI\'s architecture (corpus: arch-cross-arch)', () => {
    // arrange
    const config = clusterConfigFromKubeVirt(kv({ developerConfiguration: { featureGates: ['CrossArchitectureVirtualization'] } }));
    const v = vmi((x) => {
      x.spec.architecture = 'arm64';
      x.spec.domain.cpu = { model: 'host-passthrough' };
    }, config);
    // act
    const pod = renderLauncherPod(v, config);
    // assert
    assert.deepEqual(pod.spec?.affinity, { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, preference: { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }] } }] } });
    assert.equal(pod.spec?.nodeSelector?.['kubevirt.io/vm-arch-arm64'], 'true');
  });
});

test('the Plugins gate adds the plugin socket directory (corpus: kv-plugins-gate)', () => {
  // arrange
  const config = clusterConfigFromKubeVirt(kv({ developerConfiguration: { featureGates: ['Plugins'] } }));
  // act
  const pod = renderLauncherPod(vmi(undefined, config), config);
  // assert
  assert.deepEqual(pod.spec?.volumes?.find((v) => v.name === 'kubevirt-plugin-sockets'), { name: 'kubevirt-plugin-sockets', emptyDir: {} });
  assert.deepEqual(compute(pod).volumeMounts?.find((m) => m.name === 'kubevirt-plugin-sockets'), { name: 'kubevirt-plugin-sockets', mountPath: '/var/run/kubevirt-plugin' });
});

describe('permittedHostDevices (corpus: host-devices-permitted, host-devices-not-permitted)', () => {
  const config = clusterConfigFromKubeVirt(kv({ permittedHostDevices: { pciHostDevices: [{ pciVendorSelector: '10DE:1EB8', resourceName: 'nvidia.com/T4' }], mediatedDevices: [{ mdevNameSelector: 'GRID T4-1Q', resourceName: 'nvidia.com/GRID_T4-1Q' }] } }));

  test('permitted devices render', () => {
    // arrange
    const v = vmi((x) => {
      x.spec.domain.devices.gpus = [{ name: 'g', deviceName: 'nvidia.com/T4' }, { name: 'v', deviceName: 'nvidia.com/GRID_T4-1Q' }];
    }, config);
    // act
    const r = compute(renderLauncherPod(v, config)).resources;
    // assert
    assert.equal(r?.limits?.['nvidia.com/T4'], '1');
  });

  test('a device not permitted is refused with KubeVirt\'s message, one sentence per device', () => {
    // arrange
    const v = vmi((x) => {
      x.spec.domain.devices.gpus = [{ name: 'g', deviceName: 'nvidia.com/other' }];
      x.spec.domain.devices.hostDevices = [{ name: 'h', deviceName: 'example.org/unlisted' }];
    }, config);
    // act / assert
    assert.throws(() => renderLauncherPod(v, config), (e: unknown) =>
      e instanceof InvalidInputError && e.message === 'spec.domain.devices: GPU nvidia.com/other is not permitted in permittedHostDevices configuration HostDevice example.org/unlisted is not permitted in permittedHostDevices configuration');
  });

  test('without permittedHostDevices any device name renders', () => {
    // arrange
    const v = vmi((x) => {
      x.spec.domain.devices.hostDevices = [{ name: 'h', deviceName: 'example.org/anything' }];
    });
    // act / assert
    assert.equal(compute(renderLauncherPod(v, clusterConfigFromKubeVirt())).resources?.limits?.['example.org/anything'], '1');
  });
});

test('persistent reservation: the pr-helper device, a label per reserved claim, an anti-affinity to it (corpus: persistent-reservation*)', () => {
  // arrange
  const v = vmi((x) => {
    x.spec.domain.devices.disks!.push({ name: 'b', lun: { bus: 'scsi', reservation: true } }, { name: 'a', lun: { bus: 'scsi', reservation: true } }, { name: 'plain', lun: { bus: 'scsi' } });
    x.spec.volumes!.push({ name: 'b', persistentVolumeClaim: { claimName: 'cb' } }, { name: 'a', persistentVolumeClaim: { claimName: 'ca' } }, { name: 'plain', persistentVolumeClaim: { claimName: 'cp' } });
  });
  const pvcs = { cb: { volumeMode: 'Block' as const, uid: 'uid-b' }, ca: { volumeMode: 'Block' as const, uid: 'uid-a' }, cp: { volumeMode: 'Block' as const, uid: 'uid-p' } };
  // act
  const pod = renderLauncherPod(v, clusterConfigFromKubeVirt(), { pvcs });
  // assert
  assert.equal(compute(pod).resources?.requests?.['devices.kubevirt.io/pr-helper'], '1');
  assert.equal(compute(pod).resources?.limits?.['devices.kubevirt.io/pr-helper'], '1');
  const labels = Object.keys(pod.metadata?.labels ?? {}).filter((k) => k.startsWith('pr.kubevirt.io/'));
  assert.deepEqual(labels.sort(), ['pr.kubevirt.io/uid-a', 'pr.kubevirt.io/uid-b']);
  assert.deepEqual(pod.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.map((t) => t.labelSelector?.matchExpressions?.[0]?.key), ['pr.kubevirt.io/uid-a', 'pr.kubevirt.io/uid-b']);
  // without the claims' UIDs (the CLI), the device only
  const offline = renderLauncherPod(v, clusterConfigFromKubeVirt());
  assert.equal(offline.spec?.affinity?.podAntiAffinity, undefined);
  assert.equal(compute(offline).resources?.limits?.['devices.kubevirt.io/pr-helper'], '1');
});
