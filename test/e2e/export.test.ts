/**
 * The export controller end to end: the sandbox cluster with its storage agents (the PV
 * provisioner binds claims, the CSI snapshotter readies VolumeSnapshots, the kubelet holds the
 * exporter pod Pending until its Secrets exist, the export server ends it at its DEADLINE,
 * virt-operator's CA) ← relay → SQLite queue → export, VM and VMI functions (LocalRuntime). What
 * the test does is what a user does: create a claim, a VM, an export; start and stop the VM.
 * The snapshot is created directly in the state the snapshot controller leaves a ready one.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { X509Certificate } from 'node:crypto';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { VirtualMachineExport } from '../../shared/api/export.ts';
import { CONFIG_MAPS, EVENTS, INGRESSES, PODS, PVCS, SECRETS, SERVICES, VM_EXPORTS, VM_SNAPSHOT_CONTENTS, VM_SNAPSHOTS, VMIS, VMS, VOLUME_SNAPSHOTS } from '../../shared/api/resources.ts';
import { REAL } from '../support/lanes.ts';
import { NS, queueIdle, startSlice, until, vmManifest, type Slice } from './support.ts';

let s: Slice;

before(async () => {
  // On the real lane kube-controller-manager's PV controller binds; the sandbox only provisions.
  s = await startSlice({ timings: { podStartupMs: 30, vmiBootMs: 30, vmiShutdownMs: 30 }, storage: { bindVolumes: !REAL, provisionMs: 50, snapshotCreateMs: 50, snapshotReadyMs: 50 } });
});
after(async () => {
  await s?.stop();
});

const claim = (name: string, annotations: Record<string, string> = {}): V1PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: NS, annotations },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'sandbox-csi' },
});
const exportOf = (name: string, source: VirtualMachineExport['spec']['source'], spec: Partial<VirtualMachineExport['spec']> = {}): VirtualMachineExport => ({
  apiVersion: 'export.kubevirt.io/v1',
  kind: 'VirtualMachineExport',
  metadata: { name, namespace: NS },
  spec: { source, ...spec },
});
const getExport = (name: string) => s.kube.get(VM_EXPORTS, NS, name);
async function boundClaim(name: string, annotations: Record<string, string> = {}): Promise<void> {
  await s.kube.create(PVCS, claim(name, annotations));
  await until(`claim ${name} Bound`, async () => (await s.kube.get(PVCS, NS, name))?.status?.phase === 'Bound', { tries: 3000, problems: s.problems });
}
async function exportPhase(name: string, phase: string, what = ''): Promise<VirtualMachineExport> {
  await until(`export ${name} ${phase}${what}`, async () => (await getExport(name))?.status?.phase === phase, { tries: 4000, problems: s.problems });
  return (await getExport(name))!;
}
const readyReason = (vme: VirtualMachineExport | undefined) => vme?.status?.conditions?.find((c) => c.type === 'Ready')?.reason;
/** Events about one export, `Type Reason: message`, oldest first. */
async function eventsOf(name: string): Promise<string[]> {
  const list = (await s.kube.list(EVENTS, NS)) as { items: { involvedObject?: { kind?: string; name?: string }; type?: string; reason?: string; message?: string; count?: number }[] };
  return list.items.filter((e) => e.involvedObject?.kind === 'VirtualMachineExport' && e.involvedObject.name === name).map((e) => `${e.type} ${e.reason}: ${e.message}`);
}

describe('export end to end (relay → queue → export function → sandbox storage agents)', () => {
  test('an export of a PVC: service, token Secret, exporter pod Running with its CA-signed certificate, links, then the TTL ends it', async () => {
    // arrange
    await boundClaim('e2e-disk', { 'cdi.kubevirt.io/storage.contentType': 'kubevirt' });
    // act
    const created = await s.kube.create(VM_EXPORTS, exportOf('e2e-pvc', { apiGroup: '', kind: 'PersistentVolumeClaim', name: 'e2e-disk' }, { ttlDuration: '12s' }));
    const ready = await exportPhase('e2e-pvc', 'Ready');
    // assert
    assert.equal(readyReason(ready), 'PodReady');
    assert.equal(ready.status?.serviceName, 'virt-export-e2e-pvc');
    assert.equal(ready.status?.tokenSecretRef, 'export-token-e2e-pvc');
    assert.equal(ready.status?.ttlExpirationTime, new Date(Date.parse(String(created.metadata?.creationTimestamp)) + 12_000).toISOString().replace('.000Z', 'Z'));
    const pod = await s.kube.get(PODS, NS, 'virt-export-e2e-pvc');
    assert.equal(pod?.status?.phase, 'Running');
    assert.ok(await s.kube.get(SERVICES, NS, 'virt-export-e2e-pvc'), 'service');
    assert.ok(await s.kube.get(SECRETS, NS, 'export-token-e2e-pvc'), 'token Secret');
    const certName = pod?.spec?.volumes?.find((v) => v.name === 'certificates')?.secret?.secretName ?? '';
    const cert = await s.kube.get(SECRETS, NS, certName);
    const ca = await s.kube.get(CONFIG_MAPS, 'kubevirt', 'kubevirt-export-ca');
    assert.ok(new X509Certificate(Buffer.from(cert?.data?.['tls.crt'] ?? '', 'base64').toString()).verify(new X509Certificate(ca?.data?.['ca-bundle'] ?? '').publicKey), 'the serving certificate is signed by kubevirt-export-ca');
    const link = ready.status?.links?.internal;
    assert.equal(link?.cert, ca?.data?.['ca-bundle']?.trim());
    assert.deepEqual(link?.volumes, [
      {
        name: 'e2e-disk',
        formats: [
          { format: 'raw', url: 'https://virt-export-e2e-pvc.default.svc/volumes/e2e-disk/disk.img' },
          { format: 'gzip', url: 'https://virt-export-e2e-pvc.default.svc/volumes/e2e-disk/disk.img.gz' },
        ],
      },
    ]);
    // act: the exporter's DEADLINE is the TTL; the server ends there and the controller deletes the export
    await until('export e2e-pvc deleted at its TTL', async () => (await getExport('e2e-pvc')) === undefined, { tries: 3000, problems: s.problems });
    // assert: its children go with it
    await until('exporter pod, service and token gone', async () => !(await s.kube.get(PODS, NS, 'virt-export-e2e-pvc')) && !(await s.kube.get(SERVICES, NS, 'virt-export-e2e-pvc')) && !(await s.kube.get(SECRETS, NS, 'export-token-e2e-pvc')), { tries: 3000, problems: s.problems });
  });

  test('an export of a stopped VM; the VM started: InUse and the exporter paused; stopped again: exporting again', async () => {
    // arrange
    await boundClaim('e2e-vm-disk');
    const vm = vmManifest('e2e-vm', { runStrategy: 'Halted' });
    vm.spec.template!.spec!.domain.devices.disks = [{ name: 'disk', disk: { bus: 'virtio' } }];
    vm.spec.template!.spec!.volumes = [{ name: 'disk', persistentVolumeClaim: { claimName: 'e2e-vm-disk' } }];
    await s.kube.create(VMS, vm);
    // act
    await s.kube.create(VM_EXPORTS, exportOf('e2e-vmexp', { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'e2e-vm' }));
    const ready = await exportPhase('e2e-vmexp', 'Ready');
    // assert
    assert.equal(ready.status?.virtualMachineName, 'e2e-vm');
    assert.deepEqual(ready.status?.links?.internal?.manifests?.map((m) => m.type), ['all', 'auth-header-secret']);
    assert.deepEqual(ready.status?.links?.internal?.volumes?.map((v) => v.name), ['e2e-vm-disk']);
    const manifest = (await s.kube.get(CONFIG_MAPS, NS, 'exporter-vm-manifest-e2e-vmexp'))?.data ?? {};
    assert.deepEqual(Object.keys(manifest).sort(), ['dv-e2e-vm-disk', 'export-name', 'internal_ca_cm', 'internal_host', 'virtualmachine-manifest'], 'the VM manifest ConfigMap, with the dv- entry of the claim no template names');
    assert.equal(manifest['internal_host'], 'virt-export-e2e-vmexp.default.svc');
    const manifestVm = JSON.parse(manifest['virtualmachine-manifest'] ?? '{}') as { metadata?: Record<string, unknown>; spec?: { runStrategy?: string }; status?: object };
    // Metadata reduced to name, namespace, labels and annotations (the VM controller's annotations stay).
    const { annotations: _annotations, labels: _labels, ...meta } = manifestVm.metadata ?? {};
    assert.deepEqual(meta, { name: 'e2e-vm', namespace: NS }, 'metadata reduced: no uid, resourceVersion, generation, managedFields');
    assert.deepEqual(manifestVm.status, {}, 'status cleared');
    assert.equal(manifestVm.spec?.runStrategy, 'Halted');
    const dv = JSON.parse(manifest['dv-e2e-vm-disk'] ?? '{}') as { metadata?: object; spec?: { source?: object; storage?: { accessModes?: string[]; resources?: object } } };
    assert.deepEqual(dv.metadata, { name: 'e2e-vm-disk', namespace: NS });
    assert.deepEqual(dv.spec?.source, { http: { url: '' } });
    assert.deepEqual(dv.spec?.storage?.accessModes, ['ReadWriteOnce']);
    assert.deepEqual(dv.spec?.storage?.resources, { requests: { storage: '1Gi' } });
    assert.deepEqual(JSON.parse(manifest['internal_ca_cm'] ?? '{}').data, { 'ca.pem': (await s.kube.get(CONFIG_MAPS, 'kubevirt', 'kubevirt-export-ca'))?.data?.['ca-bundle']?.trim() });
    // act: start the VM
    await s.kube.patch(VMS, NS, 'e2e-vm', { type: 'merge', body: { spec: { runStrategy: 'Always' } } });
    await until('the VMI Running', async () => (await s.kube.get(VMIS, NS, 'e2e-vm'))?.status?.phase === 'Running', { tries: 4000, problems: s.problems });
    await until('export InUse', async () => readyReason(await getExport('e2e-vmexp')) === 'InUse', { tries: 3000, problems: s.problems });
    // assert
    const paused = await getExport('e2e-vmexp');
    assert.equal(paused?.status?.phase, 'Pending');
    assert.equal(paused?.status?.conditions?.find((c) => c.type === 'Ready')?.message, 'Virtual Machine default/e2e-vm is running');
    await until('the exporter pod gone', async () => !(await s.kube.get(PODS, NS, 'virt-export-e2e-vmexp')), { tries: 3000, problems: s.problems });
    assert.ok((await eventsOf('e2e-vmexp')).some((e) => e.startsWith('Warning ExportPaused')), 'ExportPaused');
    // act: stop it
    await s.kube.patch(VMS, NS, 'e2e-vm', { type: 'merge', body: { spec: { runStrategy: 'Halted' } } });
    // assert
    await until('the VMI gone', async () => !(await s.kube.get(VMIS, NS, 'e2e-vm')), { tries: 4000, problems: s.problems });
    const again = await exportPhase('e2e-vmexp', 'Ready', ' again');
    assert.equal(readyReason(again), 'PodReady');
  });

  test("an Ingress to the export proxy in KubeVirt's namespace: a Ready export's external link appears at once, and goes with it", async () => {
    // arrange: a Ready export, nothing else happening to it
    await boundClaim('e2e-ing-disk');
    await s.kube.create(VM_EXPORTS, exportOf('e2e-ing', { apiGroup: '', kind: 'PersistentVolumeClaim', name: 'e2e-ing-disk' }));
    const ready = await exportPhase('e2e-ing', 'Ready');
    assert.equal(ready.status?.links?.external, undefined, 'no Ingress yet: no external link');
    await until('the export queue idle', () => queueIdle(s, ['export']), { tries: 3000, problems: s.problems });
    // act: publish the proxy (only the relay's Ingress wake brings the export's key back)
    await s.kube.create(INGRESSES, {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'e2e-export-proxy', namespace: 'kubevirt' },
      spec: { rules: [{ host: 'export.e2e.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'virt-exportproxy', port: { number: 443 } } } }] } }] },
    });
    // assert
    await until('the external link', async () => (await getExport('e2e-ing'))?.status?.links?.external !== undefined, { tries: 3000, problems: s.problems });
    const external = (await getExport('e2e-ing'))?.status?.links?.external;
    assert.deepEqual(external?.volumes?.[0]?.formats.map((f) => f.url), [
      'https://export.e2e.example.com/api/export.kubevirt.io/v1/namespaces/default/virtualmachineexports/e2e-ing/volumes/e2e-ing-disk/dir',
      'https://export.e2e.example.com/api/export.kubevirt.io/v1/namespaces/default/virtualmachineexports/e2e-ing/volumes/e2e-ing-disk/disk.tar.gz',
    ]);
    assert.equal(external?.cert, '', 'no TLS secret: no certificate');
    // act: the Ingress goes
    await s.kube.delete(INGRESSES, 'kubevirt', 'e2e-export-proxy');
    // assert
    await until('the external link gone', async () => (await getExport('e2e-ing'))?.status?.links?.external === undefined, { tries: 3000, problems: s.problems });
  });

  test('an export of a ready VirtualMachineSnapshot: its volume restored from the VolumeSnapshot, served under the original name', async () => {
    // arrange: a claim, its CSI snapshot (the snapshotter readies it), and the snapshot and content as the snapshot controller leaves them
    await boundClaim('e2e-snap-disk');
    const snap = await s.kube.create(VM_SNAPSHOTS, { apiVersion: 'snapshot.kubevirt.io/v1beta1', kind: 'VirtualMachineSnapshot', metadata: { name: 'e2e-snap', namespace: NS }, spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'e2e-snap-vm' } } });
    const uid = snap.metadata?.uid ?? '';
    const vsName = `vmsnapshot-${uid}-volume-disk`;
    await s.kube.create(VOLUME_SNAPSHOTS, { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name: vsName, namespace: NS }, spec: { source: { persistentVolumeClaimName: 'e2e-snap-disk' }, volumeSnapshotClassName: 'sandbox-csi-snapclass' } });
    await until('the VolumeSnapshot ready', async () => (await s.kube.get(VOLUME_SNAPSHOTS, NS, vsName))?.status?.readyToUse === true, { tries: 3000, problems: s.problems });
    const pvcSpec = (await s.kube.get(PVCS, NS, 'e2e-snap-disk'))!;
    const content = `vmsnapshot-content-${uid}`;
    const creationTime = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await s.kube.create(VM_SNAPSHOT_CONTENTS, {
      apiVersion: 'snapshot.kubevirt.io/v1beta1',
      kind: 'VirtualMachineSnapshotContent',
      metadata: { name: content, namespace: NS },
      spec: {
        virtualMachineSnapshotName: 'e2e-snap',
        source: { virtualMachine: { metadata: { name: 'e2e-snap-vm', namespace: NS }, spec: { template: { spec: { domain: { devices: {} }, volumes: [{ name: 'disk', persistentVolumeClaim: { claimName: 'e2e-snap-disk' } }] } } } } },
        volumeBackups: [{ volumeName: 'disk', persistentVolumeClaim: { metadata: { name: 'e2e-snap-disk', namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: pvcSpec.spec?.storageClassName ?? 'sandbox-csi' } }, volumeSnapshotName: vsName }],
      },
    });
    await s.kube.patch(VM_SNAPSHOT_CONTENTS, NS, content, { type: 'merge', body: { status: { readyToUse: true, creationTime, volumeSnapshotStatus: [{ volumeSnapshotName: vsName, readyToUse: true, creationTime }] } } }, { subresource: 'status' });
    await s.kube.patch(VM_SNAPSHOTS, NS, 'e2e-snap', { type: 'merge', body: { status: { readyToUse: true, phase: 'Succeeded', creationTime, virtualMachineSnapshotContentName: content } } }, { subresource: 'status' });
    // act
    await s.kube.create(VM_EXPORTS, exportOf('e2e-snapexp', { apiGroup: 'snapshot.kubevirt.io', kind: 'VirtualMachineSnapshot', name: 'e2e-snap' }));
    const ready = await exportPhase('e2e-snapexp', 'Ready');
    // assert
    const restored = await s.kube.get(PVCS, NS, 'e2e-snapexp-e2e-snap-disk');
    assert.equal(restored?.status?.phase, 'Bound');
    assert.deepEqual(restored?.spec?.dataSource, { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: vsName });
    assert.equal(ready.status?.virtualMachineName, 'e2e-snap-vm');
    assert.deepEqual(ready.status?.conditions?.map((c) => `${c.type}=${c.status} ${c.reason}`), ['Ready=True PodReady', 'VolumesCreated=True AllPVCsReady']);
    assert.deepEqual(ready.status?.links?.internal?.volumes?.map((v) => `${v.name} ${v.formats.map((f) => f.url).join(' ')}`), [
      'e2e-snap-disk https://virt-export-e2e-snapexp.default.svc/volumes/e2e-snapexp-e2e-snap-disk/disk.img https://virt-export-e2e-snapexp.default.svc/volumes/e2e-snapexp-e2e-snap-disk/disk.img.gz',
    ]);
  });

  test('an export of a missing PVC: a clear condition and Event, nothing retried, other exports unaffected', async () => {
    // arrange
    await boundClaim('e2e-fine-disk');
    // act
    await s.kube.create(VM_EXPORTS, exportOf('e2e-missing', { apiGroup: '', kind: 'PersistentVolumeClaim', name: 'no-such-claim' }));
    await s.kube.create(VM_EXPORTS, exportOf('e2e-fine', { apiGroup: '', kind: 'PersistentVolumeClaim', name: 'e2e-fine-disk' }));
    await exportPhase('e2e-fine', 'Ready', ' (the other export)');
    await until('PVCNotFound', async () => (await getExport('e2e-missing'))?.status?.conditions?.some((c) => c.reason === 'PVCNotFound') === true, { tries: 3000, problems: s.problems });
    // assert
    const missing = await getExport('e2e-missing');
    assert.deepEqual(missing?.status?.conditions?.map((c) => `${c.type}=${c.status} ${c.reason}${c.message ? `: ${c.message}` : ''}`), ['Ready=False Initializing', 'PVCReady=False PVCNotFound: PersistentVolumeClaim default/no-such-claim not found']);
    assert.ok((await eventsOf('e2e-missing')).includes('Warning PVCNotFound: PersistentVolumeClaim default/no-such-claim not found'));
    await until('the export queue idle', () => queueIdle(s, ['export']), { tries: 3000, problems: s.problems });
    const rv = missing?.metadata?.resourceVersion;
    await sleep(1500);
    assert.equal((await getExport('e2e-missing'))?.metadata?.resourceVersion, rv, 'no further writes: nothing retried');
    assert.ok(await queueIdle(s, ['export']), 'nothing queued, nothing in flight');
    const depth = await s.rt.queue.depth('export');
    assert.deepEqual([depth.delayed, depth.deadLettered], [0, 0], 'no requeue timer, no retry backoff, nothing dead-lettered');
  });
});
