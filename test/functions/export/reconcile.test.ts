/**
 * The export reconcile against the sandbox API server (reference-snapshot-export-backup.md §3):
 * the test plays kubelet (pod phases), the PV binder (claim phases), CDI, virt-handler (a VMI)
 * and the snapshot controller (a ready snapshot and content), and checks what the controller
 * wrote: names, owners, the pod's spec, conditions with their timestamps, links, events, requeues.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { CertificateAuthority } from '../../../sandbox/storage/operator-cas.ts';
import type { VirtualMachineExport } from '../../../shared/api/export.ts';
import { CONFIG_MAPS, DATA_VOLUMES, KUBEVIRTS, PODS, PVCS, SECRETS, SERVICES, VM_BACKUP_TRACKERS, VM_BACKUPS, VM_EXPORTS, VM_SNAPSHOT_CONTENTS, VM_SNAPSHOTS, VMIS, VMS, VOLUME_SNAPSHOTS } from '../../../shared/api/resources.ts';
import { reconcileExport } from '../../../functions/export/reconcile.ts';
import { actions, events, exportManifest, harness, NS, publishExportCa, pvcManifest, pvcSourceRef, snapshotSourceRef, vmSourceRef, type Harness } from './support.ts';
import { vmManifest } from '../../e2e/support.ts';

let server: ApiServer;
let h: Harness;
let ca: CertificateAuthority;

before(async () => {
  server = await startApiServer({ port: 0 });
  h = harness(server);
  ca = await publishExportCa(h.kube);
});
after(async () => {
  await server.close();
});
beforeEach(() => {
  h = harness(server);
  server.audit.clear();
});

const key = (name: string) => `${NS}/${name}`;
async function createExport(vme: VirtualMachineExport): Promise<VirtualMachineExport> {
  return h.kube.create(VM_EXPORTS, vme);
}
async function getExport(name: string): Promise<VirtualMachineExport> {
  const vme = await h.kube.get(VM_EXPORTS, NS, name);
  assert.ok(vme, `export ${name} must exist`);
  return vme;
}
async function boundPvc(name: string, extra: Parameters<typeof pvcManifest>[1] = {}) {
  const pvc = await h.kube.create(PVCS, pvcManifest(name, extra));
  await h.kube.patch(PVCS, NS, name, { type: 'merge', body: { status: { phase: 'Bound' } } }, { subresource: 'status' });
  return pvc;
}
/** Plays kubelet: the exporter pod Running with a ready container. */
async function runPod(name: string): Promise<void> {
  await h.kube.patch(PODS, NS, name, { type: 'merge', body: { status: { phase: 'Running', containerStatuses: [{ name: 'exporter', ready: true, restartCount: 0, image: 'x', imageID: '', state: { running: {} } }] } } }, { subresource: 'status' });
}
const cond = (vme: VirtualMachineExport, type: string) => vme.status?.conditions?.find((c) => c.type === type);
const condSummary = (vme: VirtualMachineExport) => (vme.status?.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason ?? ''}${c.message ? `: ${c.message}` : ''}`);
/** The pod's volumes as rendered: the API server's ServiceAccount admission adds the kube-api-access- token volume (both lanes). */
const renderedVolumes = (pod: V1Pod | undefined) => (pod?.spec?.volumes ?? []).map((v) => v.name).filter((n) => !n.startsWith('kube-api-access-'));
const envOf = (pod: V1Pod) => Object.fromEntries((pod.spec?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));

describe('export of a PVC', () => {
  test('first pass: service, token Secret, exporter pod, its certificate Secret, then the status', async () => {
    // arrange
    await boundPvc('disk-a');
    const vme = await createExport(exportManifest('exp-a', pvcSourceRef('disk-a'), { ttlDuration: '1h' }));
    // act
    const out = await reconcileExport(key('exp-a'), h.deps);
    // assert
    assert.equal(out.kind, 'done');
    const pod = await h.kube.get(PODS, NS, 'virt-export-exp-a');
    assert.ok(pod, 'exporter pod');
    const certSecret = pod.spec?.volumes?.find((v) => v.name === 'certificates')?.secret?.secretName ?? '';
    assert.match(certSecret, /^secret-[bcdfghjklmnpqrstvwxz2456789]{10}$/);
    assert.deepEqual(actions(server), [
      'create services virt-export-exp-a',
      'event ServiceCreated',
      'create secrets export-token-exp-a',
      'event SecretCreated',
      'create pods virt-export-exp-a',
      'event ExporterPodCreated',
      `create secrets ${certSecret}`,
      'event SecretCreated',
      'update virtualmachineexports/status exp-a',
    ]);
    assert.deepEqual(events(server), [
      'Normal ServiceCreated: Created service default/virt-export-exp-a',
      'Normal SecretCreated: Created default secret default/export-token-exp-a',
      'Normal ExporterPodCreated: Created exporter pod default/virt-export-exp-a',
      'Normal SecretCreated: Created exporter pod secret',
    ]);
    const svc = await h.kube.get(SERVICES, NS, 'virt-export-exp-a');
    assert.deepEqual(svc?.metadata?.labels, { 'kubevirt.io': 'virt-exporter' });
    assert.deepEqual(svc?.spec?.selector, { 'kubevirt.io.virt-export-service': 'exp-a' });
    assert.deepEqual(svc?.spec?.ports?.map((p) => `${p.name} ${p.protocol} ${p.port}->${String(p.targetPort)}`), ['export TCP 443->8443']);
    assert.equal(svc?.metadata?.ownerReferences?.[0]?.uid, vme.metadata?.uid);
    const token = await h.kube.get(SECRETS, NS, 'export-token-exp-a');
    assert.equal(token?.type, 'Opaque');
    assert.match(Buffer.from(token?.data?.token ?? '', 'base64').toString(), /^[0-9A-Za-z]{20}$/);
    assert.deepEqual(pod.metadata?.labels, { 'kubevirt.io.virt-export-service': 'exp-a' }, 'the renderer label kubevirt.io=virt-exporter does not survive');
    assert.equal(pod.metadata?.annotations?.['kubevirt.io/export.certParameters'], '{"Duration":86400000000000,"RenewBefore":17280000000000}');
    assert.equal(pod.spec?.restartPolicy, 'Never');
    assert.equal(pod.metadata?.ownerReferences?.[0]?.kind, 'VirtualMachineExport');
    const env = envOf(pod);
    const ttl = Date.parse(String(vme.metadata?.creationTimestamp)) + 3_600_000;
    assert.equal(env.DEADLINE, new Date(ttl).toISOString().replace('.000Z', 'Z'), 'the TTL comes before the certificate renewal');
    assert.equal(env.VOLUME0_EXPORT_PATH, '/export-volumes/disk-a');
    assert.equal(env.VOLUME0_EXPORT_DIR_URI, '/volumes/disk-a/dir/');
    assert.equal(env.VOLUME0_EXPORT_ARCHIVE_URI, '/volumes/disk-a/disk.tar.gz');
    assert.equal(env.EXPORT_VM_DEF_URI, undefined);
    assert.deepEqual(renderedVolumes(pod), ['certificates', 'token', 'disk-a']);
    const cert = await h.kube.get(SECRETS, NS, certSecret);
    assert.equal(cert?.type, 'kubernetes.io/tls');
    assert.equal(cert?.metadata?.ownerReferences?.[0]?.kind, 'Pod');
    const x509 = new X509Certificate(Buffer.from(cert?.data?.['tls.crt'] ?? '', 'base64').toString());
    assert.ok(x509.verify(new X509Certificate(ca.certPem).publicKey), 'signed by kubevirt-export-ca');
    assert.match(x509.subjectAltName ?? '', /DNS:virt-export-exp-a\.default\.svc\b/);
    const got = await getExport('exp-a');
    assert.equal(got.status?.phase, 'Pending');
    assert.deepEqual(condSummary(got), ['Ready=False PodPending', 'PVCReady=True PVCBound']);
    assert.equal(got.status?.tokenSecretRef, 'export-token-exp-a');
    assert.equal(got.status?.serviceName, 'virt-export-exp-a');
    assert.equal(got.status?.ttlExpirationTime, new Date(ttl).toISOString().replace('.000Z', 'Z'));
    assert.deepEqual(got.status?.links, {});
  });

  test('pod ready: phase Ready, internal links (dir and tar.gz for a plain claim; raw and gzip for kubevirt content)', async () => {
    for (const c of [
      { name: 'exp-links', claim: 'disk-links', annotations: {} as Record<string, string>, formats: ['dir https://virt-export-exp-links.default.svc/volumes/disk-links/dir', 'tar.gz https://virt-export-exp-links.default.svc/volumes/disk-links/disk.tar.gz'] },
      { name: 'exp-kv', claim: 'disk-kv', annotations: { 'cdi.kubevirt.io/storage.contentType': 'kubevirt' } as Record<string, string>, formats: ['raw https://virt-export-exp-kv.default.svc/volumes/disk-kv/disk.img', 'gzip https://virt-export-exp-kv.default.svc/volumes/disk-kv/disk.img.gz'] },
    ]) {
      // arrange
      await boundPvc(c.claim, { annotations: c.annotations });
      await createExport(exportManifest(c.name, pvcSourceRef(c.claim)));
      await reconcileExport(key(c.name), h.deps);
      await runPod(`virt-export-${c.name}`);
      // act
      await reconcileExport(key(c.name), h.deps);
      // assert
      const got = await getExport(c.name);
      assert.equal(got.status?.phase, 'Ready', c.name);
      assert.deepEqual(condSummary(got), ['Ready=True PodReady', 'PVCReady=True PVCBound']);
      const link = got.status?.links?.internal;
      assert.equal(link?.cert, ca.certPem.trim(), 'the CA bundle, trimmed');
      assert.deepEqual(link?.volumes?.map((v) => v.name), [c.claim]);
      assert.deepEqual(link?.volumes?.[0]?.formats.map((f) => `${f.format} ${f.url}`), c.formats);
      assert.deepEqual(link?.manifests, [{ type: 'auth-header-secret', url: `https://virt-export-${c.name}.default.svc/internal/manifests/secret` }]);
      assert.equal(got.status?.links?.external, undefined, 'no ingress or route to virt-exportproxy');
    }
  });

  test('conditions keep their timestamps while unchanged; a new reason replaces one in place', async () => {
    // arrange
    await boundPvc('disk-ts');
    await createExport(exportManifest('exp-ts', pvcSourceRef('disk-ts')));
    await reconcileExport(key('exp-ts'), h.deps);
    const first = await getExport('exp-ts');
    h.advance(60_000);
    // act: nothing changed, then the pod runs
    await reconcileExport(key('exp-ts'), h.deps);
    const same = await getExport('exp-ts');
    await runPod('virt-export-exp-ts');
    await reconcileExport(key('exp-ts'), h.deps);
    const moved = await getExport('exp-ts');
    // assert
    assert.deepEqual(same.status, first.status, 'an unchanged pass writes nothing new');
    assert.equal(cond(moved, 'PVCReady')?.lastTransitionTime, cond(first, 'PVCReady')?.lastTransitionTime);
    assert.notEqual(cond(moved, 'Ready')?.lastTransitionTime, cond(first, 'Ready')?.lastTransitionTime);
    assert.deepEqual(moved.status?.conditions?.map((c) => c.type), ['Ready', 'PVCReady'], 'first-insertion order');
  });

  test('a claim in use by another pod: InUse, no exporter, 3 s requeue; an exporter that was running is paused', async () => {
    // arrange
    await boundPvc('disk-busy');
    await createExport(exportManifest('exp-busy', pvcSourceRef('disk-busy')));
    await reconcileExport(key('exp-busy'), h.deps);
    await runPod('virt-export-exp-busy');
    await h.kube.create(PODS, { metadata: { name: 'user-of-disk-busy', namespace: NS }, spec: { containers: [{ name: 'c', image: 'x' }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'disk-busy' } }] } });
    server.audit.clear();
    // act
    const out = await reconcileExport(key('exp-busy'), h.deps);
    // assert
    assert.deepEqual(out, { kind: 'requeue', afterSeconds: 3, why: 'export source has content but is not available yet' });
    assert.deepEqual(actions(server), ['delete pods virt-export-exp-busy', 'event ExportPaused', 'update virtualmachineexports/status exp-busy']);
    const got = await getExport('exp-busy');
    assert.equal(got.status?.phase, 'Pending');
    assert.deepEqual(condSummary(got), ['Ready=False InUse: PersistentVolumeClaim default/disk-busy is in use', 'PVCReady=True PVCBound']);
    assert.deepEqual(got.status?.links, {});
  });

  test('a claim its DataVolume has not populated yet: PVCPending, 3 s requeue; a missing DataVolume is an error', async () => {
    // arrange
    const dv = await h.kube.create(DATA_VOLUMES, { apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', metadata: { name: 'dv-pop', namespace: NS }, spec: { source: { blank: {} }, storage: {} } } as never);
    const owner = { apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', name: 'dv-pop', uid: dv.metadata?.uid ?? '', controller: true };
    await h.kube.create(PVCS, { ...pvcManifest('dv-pop'), metadata: { name: 'dv-pop', namespace: NS, ownerReferences: [owner] } });
    await createExport(exportManifest('exp-pop', pvcSourceRef('dv-pop')));
    // act
    const out = await reconcileExport(key('exp-pop'), h.deps);
    // assert
    assert.equal(out.kind === 'requeue' && out.afterSeconds, 3);
    assert.deepEqual(condSummary(await getExport('exp-pop')), ['Ready=False PVCPending: PersistentVolumeClaim default/dv-pop is not populated', 'PVCReady=False PVCPending']);
    assert.equal(await h.kube.get(PODS, NS, 'virt-export-exp-pop'), undefined);
    // arrange: a read that no longer finds the DataVolume (the garbage collector would take the claim with it, so the read is faked)
    const kube = { ...h.deps.kube, get: ((res, ns, name, o) => (res === DATA_VOLUMES ? Promise.resolve(undefined) : h.deps.kube.get(res, ns, name, o))) as typeof h.deps.kube.get };
    // act / assert: an error, retried with backoff
    await assert.rejects(reconcileExport(key('exp-pop'), { ...h.deps, kube }), /datavolume default\/dv-pop not found/);
  });

  test('a missing claim: PVCNotFound condition, one Warning, no requeue, no pod', async () => {
    // arrange
    await createExport(exportManifest('exp-missing', pvcSourceRef('no-such-claim')));
    // act
    const first = await reconcileExport(key('exp-missing'), h.deps);
    const second = await reconcileExport(key('exp-missing'), h.deps);
    // assert
    assert.equal(first.kind, 'done');
    assert.equal(second.kind, 'done');
    const got = await getExport('exp-missing');
    assert.equal(got.status?.phase, 'Pending');
    assert.deepEqual(condSummary(got), ['Ready=False Initializing', 'PVCReady=False PVCNotFound: PersistentVolumeClaim default/no-such-claim not found']);
    assert.deepEqual(events(server), ['Normal ServiceCreated: Created service default/virt-export-exp-missing', 'Warning PVCNotFound: PersistentVolumeClaim default/no-such-claim not found']);
    assert.equal(got.status?.tokenSecretRef, undefined, 'no token for a source with nothing to export');
    assert.equal(await h.kube.get(PODS, NS, 'virt-export-exp-missing'), undefined);
  });

  test('the exporter pod finished: deleted with a Warning, phase Terminated; the next pass makes a new one', async () => {
    // arrange
    await boundPvc('disk-fin');
    await createExport(exportManifest('exp-fin', pvcSourceRef('disk-fin')));
    await reconcileExport(key('exp-fin'), h.deps);
    const before = await h.kube.get(PODS, NS, 'virt-export-exp-fin');
    await h.kube.patch(PODS, NS, 'virt-export-exp-fin', { type: 'merge', body: { status: { phase: 'Succeeded' } } }, { subresource: 'status' });
    server.audit.clear();
    // act
    await reconcileExport(key('exp-fin'), h.deps);
    const terminated = await getExport('exp-fin');
    await reconcileExport(key('exp-fin'), h.deps);
    // assert
    assert.equal(terminated.status?.phase, 'Terminated');
    assert.equal(cond(terminated, 'Ready')?.reason, 'PodCompleted');
    assert.equal(events(server)[0], 'Warning ExporterPodFailedOrCompleted: Exporter pod default/virt-export-exp-fin is in phase Succeeded');
    const after = await h.kube.get(PODS, NS, 'virt-export-exp-fin');
    assert.ok(after && after.metadata?.uid !== before?.metadata?.uid, 'a new exporter pod');
  });

  test('the TTL is up: the export is deleted (its pod, service and Secrets go with it)', async () => {
    // arrange
    await boundPvc('disk-ttl');
    await createExport(exportManifest('exp-ttl', pvcSourceRef('disk-ttl'), { ttlDuration: '10m' }));
    await reconcileExport(key('exp-ttl'), h.deps);
    h.advance(10 * 60_000 + 1000);
    server.audit.clear();
    // act
    const out = await reconcileExport(key('exp-ttl'), h.deps);
    // assert
    assert.equal(out.kind, 'done');
    assert.deepEqual(actions(server), ['delete virtualmachineexports exp-ttl']);
    assert.equal(await h.kube.get(VM_EXPORTS, NS, 'exp-ttl'), undefined);
  });

  test('new certificate parameters in the KubeVirt CR: the pod is replaced', async () => {
    // arrange
    await boundPvc('disk-cert');
    await createExport(exportManifest('exp-cert', pvcSourceRef('disk-cert')));
    await reconcileExport(key('exp-cert'), h.deps);
    await runPod('virt-export-exp-cert');
    const kv = await h.kube.create(KUBEVIRTS, { apiVersion: 'kubevirt.io/v1', kind: 'KubeVirt', metadata: { name: 'kubevirt', namespace: 'kubevirt' }, spec: { certificateRotateStrategy: { selfSigned: { server: { duration: '48h' } } } } } as never);
    server.audit.clear();
    try {
      // act
      await reconcileExport(key('exp-cert'), h.deps);
      await reconcileExport(key('exp-cert'), h.deps);
      // assert
      assert.equal(events(server)[0], 'Warning CertificateParametersChanged: Exporter TLS certificate parameters updated');
      const pod = await h.kube.get(PODS, NS, 'virt-export-exp-cert');
      assert.equal(pod?.metadata?.annotations?.['kubevirt.io/export.certParameters'], '{"Duration":172800000000000,"RenewBefore":34560000000000}');
    } finally {
      await h.kube.delete(KUBEVIRTS, 'kubevirt', kv.metadata?.name ?? '');
    }
  });

  test('spec.tokenSecretRef: copied to the status, no Secret made', async () => {
    // arrange
    await boundPvc('disk-tok');
    await createExport(exportManifest('exp-tok', pvcSourceRef('disk-tok'), { tokenSecretRef: 'my-token' }));
    // act
    await reconcileExport(key('exp-tok'), h.deps);
    // assert
    const got = await getExport('exp-tok');
    assert.equal(got.status?.tokenSecretRef, 'my-token');
    assert.equal(await h.kube.get(SECRETS, NS, 'export-token-exp-tok'), undefined);
    const pod = await h.kube.get(PODS, NS, 'virt-export-exp-tok');
    assert.equal(pod?.spec?.volumes?.find((v) => v.name === 'token')?.secret?.secretName, 'my-token');
  });

  test('a source this controller does not export, a deleting or a missing export: nothing written', async () => {
    // arrange
    await createExport(exportManifest('exp-other', { apiGroup: 'example.com', kind: 'Thing', name: 'x' }));
    // act
    const outs = [await reconcileExport(key('exp-other'), h.deps), await reconcileExport(key('exp-nothing'), h.deps)];
    // assert
    assert.deepEqual(outs.map((o) => o.kind), ['done', 'done']);
    assert.deepEqual(actions(server), []);
    assert.equal((await getExport('exp-other')).status, undefined);
  });
});

describe('export of a VM', () => {
  const vmWithDisk = (name: string, claim: string) =>
    vmManifest(name, { runStrategy: 'Halted', template: { spec: { domain: { devices: { disks: [{ name: 'disk', disk: { bus: 'virtio' } }] } }, volumes: [{ name: 'disk', persistentVolumeClaim: { claimName: claim } }] } } } as never);

  test('a stopped VM: the exporter serves its claims and the manifests; virtualMachineName set', async () => {
    // arrange
    await boundPvc('vm1-disk');
    await h.kube.create(VMS, vmWithDisk('vm1', 'vm1-disk'));
    await createExport(exportManifest('exp-vm1', vmSourceRef('vm1')));
    // act
    await reconcileExport(key('exp-vm1'), h.deps);
    await runPod('virt-export-exp-vm1');
    await reconcileExport(key('exp-vm1'), h.deps);
    // assert
    const pod = await h.kube.get(PODS, NS, 'virt-export-exp-vm1');
    assert.equal(envOf(pod!).EXPORT_VM_DEF_URI, '/manifests/all');
    assert.deepEqual(renderedVolumes(pod), ['certificates', 'token', 'vm1-disk', 'manifest-data']);
    // As KubeVirt's exporter pod (the live differential lane): its env order, the claim volume
    // without readOnly (the mount has it), the memory limit as a canonical quantity.
    const exporter = pod!.spec!.containers[0]!;
    assert.deepEqual(exporter.env?.map((e) => e.name).slice(6), ['EXPORT_VM_DEF_URI', 'VOLUME0_EXPORT_PATH', 'VOLUME0_EXPORT_ARCHIVE_URI', 'VOLUME0_EXPORT_DIR_URI']);
    assert.deepEqual(JSON.parse(JSON.stringify(pod!.spec!.volumes!.find((v) => v.name === 'vm1-disk'))), { name: 'vm1-disk', persistentVolumeClaim: { claimName: 'vm1-disk' } });
    assert.equal(exporter.volumeMounts?.find((m) => m.name === 'vm1-disk')?.readOnly, true);
    assert.equal(exporter.resources?.limits?.memory, '1Gi');
    const cm = await h.kube.get(CONFIG_MAPS, NS, 'exporter-vm-manifest-exp-vm1');
    assert.equal(cm?.data?.internal_host, 'virt-export-exp-vm1.default.svc');
    assert.equal(JSON.parse(cm?.data?.['virtualmachine-manifest'] ?? '{}').metadata.name, 'vm1');
    assert.deepEqual(JSON.parse(cm?.data?.['virtualmachine-manifest'] ?? '{}').status, {}, 'status cleared: Go writes the empty struct');
    assert.deepEqual(Object.keys(cm?.data ?? {}).sort(), ['dv-vm1-disk', 'export-name', 'internal_ca_cm', 'internal_host', 'virtualmachine-manifest'], 'a PVC volume without a template gets its dv- entry');
    // The claim's volume mode as the API server stored it (the real one defaults it to Filesystem).
    const volumeMode = (await h.kube.get(PVCS, NS, 'vm1-disk'))?.spec?.volumeMode;
    assert.deepEqual(JSON.parse(cm?.data?.['dv-vm1-disk'] ?? '{}').spec, { source: { http: { url: '' } }, storage: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...(volumeMode ? { volumeMode } : {}) } });
    const got = await getExport('exp-vm1');
    assert.equal(got.status?.phase, 'Ready');
    assert.equal(got.status?.virtualMachineName, 'vm1');
    assert.deepEqual(condSummary(got), ['Ready=True PodReady'], 'a VM source writes no condition of its own');
    assert.deepEqual(got.status?.links?.internal?.manifests?.map((m) => m.type), ['all', 'auth-header-secret']);
    assert.ok(events(server).includes('Normal DataManifestCreated: Created exporter data manifest default/exporter-vm-manifest-exp-vm1'));
  });

  test('the VM runs: InUse, the exporter paused, no requeue (the VMI going away brings the key back)', async () => {
    // arrange
    await boundPvc('vm2-disk');
    await h.kube.create(VMS, vmWithDisk('vm2', 'vm2-disk'));
    await createExport(exportManifest('exp-vm2', vmSourceRef('vm2')));
    await reconcileExport(key('exp-vm2'), h.deps);
    await h.kube.create(VMIS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'vm2', namespace: NS }, spec: { domain: { devices: {} } } } as never);
    await h.kube.patch(VMIS, NS, 'vm2', { type: 'merge', body: { status: { phase: 'Running' } } });
    server.audit.clear();
    // act
    const out = await reconcileExport(key('exp-vm2'), h.deps);
    // assert
    assert.equal(out.kind, 'done');
    assert.deepEqual(events(server), ['Warning ExportPaused: ']);
    assert.deepEqual(condSummary(await getExport('exp-vm2')), ['Ready=False InUse: Virtual Machine default/vm2 is running']);
    // arrange: the VM stops
    await h.kube.delete(VMIS, NS, 'vm2');
    // act
    await reconcileExport(key('exp-vm2'), h.deps);
    // assert
    assert.ok(await h.kube.get(PODS, NS, 'virt-export-exp-vm2'), 'exporting again');
  });

  const vmCases = [
    { name: 'a missing VM', vm: undefined, want: ['Ready=False VMNotFound: Virtual Machine default/exp-vm-gone-vm not found'] },
    { name: 'a VM without volumes', vm: 'container-disk', want: ['Ready=False VMNoVolumes: Virtual Machine default/exp-vm-empty-vm has no volumes'] },
  ];
  for (const c of vmCases) {
    test(`${c.name}: phase Skipped, no requeue, no pod`, async () => {
      // arrange
      const exp = c.vm ? 'exp-vm-empty' : 'exp-vm-gone';
      if (c.vm) await h.kube.create(VMS, vmManifest(`${exp}-vm`, { runStrategy: 'Halted' }));
      await createExport(exportManifest(exp, vmSourceRef(`${exp}-vm`)));
      // act
      const out = await reconcileExport(key(exp), h.deps);
      // assert
      assert.equal(out.kind, 'done');
      const got = await getExport(exp);
      assert.equal(got.status?.phase, 'Skipped');
      assert.deepEqual(condSummary(got), c.want);
      assert.equal(await h.kube.get(PODS, NS, `virt-export-${exp}`), undefined);
    });
  }
});

describe('export of a VirtualMachineSnapshot', () => {
  /** Plays the snapshot controller and the CSI snapshotter: a ready snapshot of `vm` with one volume. */
  async function readySnapshot(snap: string, vm: string, claim: string): Promise<void> {
    const s = await h.kube.create(VM_SNAPSHOTS, { apiVersion: 'snapshot.kubevirt.io/v1beta1', kind: 'VirtualMachineSnapshot', metadata: { name: snap, namespace: NS }, spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: vm } } });
    const uid = s.metadata?.uid ?? '';
    const vsName = `vmsnapshot-${uid}-volume-disk`;
    await h.kube.create(VOLUME_SNAPSHOTS, { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name: vsName, namespace: NS }, spec: { source: { persistentVolumeClaimName: claim } } });
    await h.kube.patch(VOLUME_SNAPSHOTS, NS, vsName, { type: 'merge', body: { status: { readyToUse: true, restoreSize: '2Gi', creationTime: '2026-03-01T12:00:00Z' } } }, { subresource: 'status' });
    const content = `vmsnapshot-content-${uid}`;
    await h.kube.create(VM_SNAPSHOT_CONTENTS, {
      apiVersion: 'snapshot.kubevirt.io/v1beta1',
      kind: 'VirtualMachineSnapshotContent',
      metadata: { name: content, namespace: NS },
      spec: {
        virtualMachineSnapshotName: snap,
        source: { virtualMachine: { metadata: { name: vm, namespace: NS }, spec: { template: { spec: { domain: { devices: {} }, volumes: [{ name: 'disk', persistentVolumeClaim: { claimName: claim } }] } } } } },
        volumeBackups: [{ volumeName: 'disk', persistentVolumeClaim: { metadata: { name: claim, namespace: NS, labels: { app: 'x' }, annotations: { 'pv.kubernetes.io/bound-by-controller': 'yes', keep: 'me' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'sandbox-csi' } }, volumeSnapshotName: vsName }],
      },
    });
    await h.kube.patch(VM_SNAPSHOT_CONTENTS, NS, content, { type: 'merge', body: { status: { readyToUse: true, creationTime: '2026-03-01T12:00:00Z', volumeSnapshotStatus: [{ volumeSnapshotName: vsName, readyToUse: true }] } } }, { subresource: 'status' });
    await h.kube.patch(VM_SNAPSHOTS, NS, snap, { type: 'merge', body: { status: { readyToUse: true, phase: 'Succeeded', virtualMachineSnapshotContentName: content } } }, { subresource: 'status' });
  }

  test('a ready snapshot: its volume restored into <export>-<claim>, served once bound, links named without the prefix', async () => {
    // arrange
    await readySnapshot('snap1', 'snap1-vm', 'snap1-disk');
    await createExport(exportManifest('exp-s1', snapshotSourceRef('snap1')));
    // act
    await reconcileExport(key('exp-s1'), h.deps);
    // assert: the restored claim
    const claim = await h.kube.get(PVCS, NS, 'exp-s1-snap1-disk');
    assert.ok(claim, 'restored claim');
    assert.deepEqual(claim.metadata?.annotations, { keep: 'me', 'cdi.kubevirt.io/storage.contentType': 'kubevirt' });
    assert.deepEqual(claim.metadata?.labels, { app: 'x' });
    assert.equal(claim.spec?.dataSource?.kind, 'VolumeSnapshot');
    assert.equal(claim.spec?.resources?.requests?.storage, '2Gi', 'the restore size is larger than the request');
    assert.equal(claim.metadata?.ownerReferences?.[0]?.kind, 'VirtualMachineExport');
    const pending = await getExport('exp-s1');
    assert.deepEqual(condSummary(pending), ['Ready=False PodPending', 'VolumesCreated=False NotAllPVCsReady: Not all PVCs are ready']);
    assert.equal(pending.status?.virtualMachineName, 'snap1-vm');
    // arrange: the binder binds it, kubelet runs the pod
    await h.kube.patch(PVCS, NS, 'exp-s1-snap1-disk', { type: 'merge', body: { status: { phase: 'Bound' } } }, { subresource: 'status' });
    await runPod('virt-export-exp-s1');
    // act
    await reconcileExport(key('exp-s1'), h.deps);
    // assert
    const ready = await getExport('exp-s1');
    assert.equal(ready.status?.phase, 'Ready');
    assert.deepEqual(condSummary(ready), ['Ready=True PodReady', 'VolumesCreated=True AllPVCsReady']);
    assert.deepEqual(ready.status?.links?.internal?.volumes?.map((v) => `${v.name} ${v.formats.map((f) => f.format).join(',')}`), ['snap1-disk raw,gzip']);
  });

  const cases = [
    { name: 'a missing snapshot', make: false, phase: 'Skipped', want: ['Ready=False VMSnapshotNotFound: VirtualMachineSnapshot default/snap-none not found', 'VolumesCreated=False VMSnapshotNoVolumes: VirtualMachineSnapshot default/snap-none does not contain any volume snapshots'] },
    { name: 'a snapshot not ready yet', make: true, phase: 'Pending', want: ['Ready=False NotAllPVCsCreated: VirtualMachineSnapshot default/snap-none is not ready to use', 'VolumesCreated=False NotAllPVCsCreated: VirtualMachineSnapshot default/snap-none is not ready to use'] },
  ];
  for (const c of cases) {
    test(`${c.name}: its conditions, phase ${c.phase}, never a requeue`, async () => {
      // arrange
      const exp = c.make ? 'exp-s-unready' : 'exp-s-none';
      if (c.make) await h.kube.create(VM_SNAPSHOTS, { apiVersion: 'snapshot.kubevirt.io/v1beta1', kind: 'VirtualMachineSnapshot', metadata: { name: 'snap-none', namespace: NS }, spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'v' } } });
      await createExport(exportManifest(exp, snapshotSourceRef('snap-none')));
      // act
      const out = await reconcileExport(key(exp), h.deps);
      // assert
      assert.equal(out.kind, 'done');
      const got = await getExport(exp);
      assert.equal(got.status?.phase, c.phase);
      assert.deepEqual(condSummary(got), c.want);
    });
  }
});

describe('export of a VirtualMachineBackup (pull mode)', () => {
  const backupSourceRef = (name: string) => ({ apiGroup: 'backup.kubevirt.io', kind: 'VirtualMachineBackup', name });
  before(async () => {
    await h.kube.create(CONFIG_MAPS, { metadata: { name: 'kubevirt-backup-ca', namespace: 'kubevirt' }, data: { 'ca-bundle': `${ca.certPem}\n` } });
  });
  async function backupWith(name: string, source: { kind: string; name: string }, status: Record<string, unknown> | undefined) {
    const b = await h.kube.create(VM_BACKUPS, { apiVersion: 'backup.kubevirt.io/v1alpha1', kind: 'VirtualMachineBackup', metadata: { name, namespace: NS }, spec: { source: { apiGroup: source.kind === 'VirtualMachine' ? 'kubevirt.io' : 'backup.kubevirt.io', ...source }, mode: 'Pull' } });
    if (status) await h.kube.patch(VM_BACKUPS, NS, name, { type: 'merge', body: { status } }, { subresource: 'status' });
    return b;
  }
  const progressing = (status: 'True' | 'False', message: string) => ({ type: 'Progressing', status, reason: 'Initiated', message, lastTransitionTime: '2025-01-01T00:00:00Z' });

  test('a progressing backup: the exporter serves each volume\'s data and map over the tunnel, next to the VM\'s launcher', async () => {
    // arrange
    const b = await backupWith('bk1', { kind: 'VirtualMachine', name: 'vm-b' }, { type: 'Incremental', checkpointName: 'cp-2', includedVolumes: [{ volumeName: 'rootdisk' }, { volumeName: 'data' }], conditions: [progressing('True', 'Backup is in progress')] });
    await createExport(exportManifest('exp-bk1', backupSourceRef('bk1')));
    // act
    await reconcileExport(key('exp-bk1'), h.deps);
    // assert: the pod
    const pod = await h.kube.get(PODS, NS, 'virt-export-exp-bk1');
    assert.ok(pod, 'the exporter pod');
    const env = pod.spec!.containers[0]!.env ?? [];
    assert.deepEqual(env.map((e) => e.name).slice(6), ['BACKUP0_BACKUP_PATH', 'BACKUP0_DATA_URI', 'BACKUP0_MAP_URI', 'BACKUP1_BACKUP_PATH', 'BACKUP1_DATA_URI', 'BACKUP1_MAP_URI', 'BACKUP_CACERT', 'BACKUP_UID', 'BACKUP_TYPE', 'BACKUP_CHECKPOINT'], "KubeVirt's env order after the common part; no manifest URI");
    const e = envOf(pod);
    assert.deepEqual([e.BACKUP1_BACKUP_PATH, e.BACKUP1_DATA_URI, e.BACKUP1_MAP_URI], ['data', '/exports/data/data', '/exports/data/map']);
    assert.equal(e.BACKUP_CACERT, ca.certPem.trim(), 'the backup CA bundle, trimmed');
    assert.equal(e.BACKUP_UID, b.metadata?.uid);
    assert.deepEqual([e.BACKUP_TYPE, e.BACKUP_CHECKPOINT], ['Incremental', 'cp-2']);
    assert.deepEqual(JSON.parse(JSON.stringify(pod.spec?.affinity)), { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { 'kubevirt.io': 'virt-launcher', 'vmi.kubevirt.io/id': 'vm-b' } }, topologyKey: 'kubernetes.io/hostname' } }] } });
    assert.equal(await h.kube.get(CONFIG_MAPS, NS, 'exporter-vm-manifest-exp-bk1'), undefined, 'no VM manifest for a backup');
    // act: the exporter runs
    await runPod('virt-export-exp-bk1');
    await reconcileExport(key('exp-bk1'), h.deps);
    // assert: the status
    const got = await getExport('exp-bk1');
    assert.equal(got.status?.phase, 'Ready');
    assert.deepEqual(condSummary(got), ['Ready=True VirtualMachineBackupReady: Backup is in progress'], "the backup's condition has the last word on Ready");
    const base = 'https://virt-export-exp-bk1.default.svc';
    assert.deepEqual(got.status?.links?.internal?.backups, [
      { name: 'rootdisk', endpoints: [{ endpoint: 'data', url: `${base}/exports/rootdisk/data` }, { endpoint: 'map', url: `${base}/exports/rootdisk/map` }] },
      { name: 'data', endpoints: [{ endpoint: 'data', url: `${base}/exports/data/data` }, { endpoint: 'map', url: `${base}/exports/data/map` }] },
    ]);
    assert.deepEqual(got.status?.links?.internal?.manifests, [{ type: 'auth-header-secret', url: `${base}/internal/manifests/secret` }]);
    assert.equal(got.status?.links?.internal?.volumes, undefined, 'no volumes: left out');
  });

  // Looked at again in 3 s only while it is not progressing (KubeVirt's requeue of an unavailable backup).
  const notReady: { name: string; status: Record<string, unknown>; want: string; requeue: number | 'done' }[] = [
    { name: 'not progressing', status: { type: 'Full', includedVolumes: [{ volumeName: 'rootdisk' }], conditions: [progressing('False', 'Backup completed')] }, want: 'Ready=False VirtualMachineBackupReady: Backup completed', requeue: 3 },
    { name: 'no included volumes', status: { type: 'Full', conditions: [progressing('True', 'x')] }, want: 'Ready=False VirtualMachineBackupReady: VMBackup has no included volumes', requeue: 'done' },
    { name: 'no Progressing condition', status: { type: 'Full', includedVolumes: [{ volumeName: 'rootdisk' }] }, want: 'Ready=False VirtualMachineBackupReady: VMBackup progressing condition not found', requeue: 3 },
  ];
  notReady.forEach((row, i) => {
    test(`a backup with ${row.name}: no exporter, its condition on Ready, requeue ${row.requeue}`, async () => {
      // arrange
      await backupWith(`bkn${i}`, { kind: 'VirtualMachine', name: 'vm-n' }, row.status);
      await createExport(exportManifest(`exp-bkn${i}`, backupSourceRef(`bkn${i}`)));
      // act
      const out = await reconcileExport(key(`exp-bkn${i}`), h.deps);
      // assert
      assert.deepEqual(out.kind === 'requeue' ? out.afterSeconds : out.kind, row.requeue);
      assert.equal(await h.kube.get(PODS, NS, `virt-export-exp-bkn${i}`), undefined, 'no pod');
      const got = await getExport(`exp-bkn${i}`);
      assert.deepEqual([got.status?.phase, ...condSummary(got)], ['Pending', row.want]);
    });
  });

  test('through a VirtualMachineBackupTracker: the VMI id is the tracked VM\'s (hashed past 63 characters)', async () => {
    // arrange
    const longVm = `vm-${'x'.repeat(70)}`;
    await h.kube.create(VM_BACKUP_TRACKERS, { apiVersion: 'backup.kubevirt.io/v1alpha1', kind: 'VirtualMachineBackupTracker', metadata: { name: 'trk', namespace: NS }, spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: longVm } } });
    await backupWith('bkt', { kind: 'VirtualMachineBackupTracker', name: 'trk' }, { type: 'Incremental', checkpointName: 'cp', includedVolumes: [{ volumeName: 'rootdisk' }], conditions: [progressing('True', '')] });
    await createExport(exportManifest('exp-bkt', { kind: 'VirtualMachineBackup', name: 'bkt' }));
    // act (the group may be left out for a backup, as for a claim)
    await reconcileExport(key('exp-bkt'), h.deps);
    // assert
    const pod = await h.kube.get(PODS, NS, 'virt-export-exp-bkt');
    const id = pod?.spec?.affinity?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.[0]?.podAffinityTerm.labelSelector?.matchLabels?.['vmi.kubevirt.io/id'];
    assert.match(id ?? '', /^vm-x{51}-[0-9a-f]{8}$/);
  });

  const failing: { name: string; setup: () => Promise<void>; source: string; message: string }[] = [
    { name: 'a missing backup', setup: async () => undefined, source: 'bk-missing', message: 'VirtualMachineBackup not found: default/bk-missing' },
    { name: 'a backup without a status type', setup: async () => void (await backupWith('bk-new', { kind: 'VirtualMachine', name: 'v' }, undefined)), source: 'bk-new', message: 'backup status empty' },
    { name: 'a tracker that does not exist', setup: async () => void (await backupWith('bk-trk', { kind: 'VirtualMachineBackupTracker', name: 'nope' }, { type: 'Full', conditions: [progressing('True', '')] })), source: 'bk-trk', message: 'VirtualMachineBackupTracker not found: default/nope' },
  ];
  failing.forEach((row, i) => {
    test(`${row.name}: the pass fails with KubeVirt's message, no status written`, async () => {
      // arrange
      await row.setup();
      await createExport(exportManifest(`exp-bkf${i}`, backupSourceRef(row.source)));
      // act / assert
      await assert.rejects(reconcileExport(key(`exp-bkf${i}`), h.deps), { message: row.message });
      assert.equal((await getExport(`exp-bkf${i}`)).status, undefined);
    });
  });
});
