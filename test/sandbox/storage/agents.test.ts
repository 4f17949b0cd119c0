/**
 * The storage agents against the sandbox cluster, over HTTP like everything else: the CAs
 * virt-operator publishes, the exporter pod's life (Pending until its Secrets exist, Running,
 * Succeeded at DEADLINE), the virt-api subresources (freeze/unfreeze through the guest agent and
 * its absence, the thaw after unfreezeTimeout, pause/unpause, VM stop), virt-handler's backup work (utility
 * volumes, asynchronous backupStatus, abort), CDI (a DataVolume's claim, adoption of a restored
 * claim), and — where the API server serves StorageClasses, PVs and VolumeSnapshots — the
 * provisioner and the CSI snapshotter. No controller runs: the tests play its part by hand.
 */
import assert from 'node:assert/strict';
import { HAS_OPENSSL } from '../../support/openssl.ts';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startSandbox, type Sandbox } from '../../../sandbox/sandbox.ts';
import { NO_GUEST_AGENT_ANNOTATION } from '../../../sandbox/nodes/guest-agent.ts';
import { clients, getPod, launcherPod, patchVmi, VMIS, vmiBody, waitFor, MERGE } from '../nodes/helpers.ts';
import type { Vmi } from '../../../sandbox/nodes/objects.ts';

const NS = 'default';
const DVS = { group: 'cdi.kubevirt.io', version: 'v1beta1', plural: 'datavolumes' } as const;

describe('sandbox storage agents', { skip: HAS_OPENSSL ? false : 'openssl is not available to make the operator CAs' }, () => {
  let sb: Sandbox;
  let api: ReturnType<typeof clients>;
  let served: Set<string>;
  before(async () => {
    sb = await startSandbox({ nodes: 2, speed: 1000, storage: true });
    api = clients(sb.apiServer.kubeConfig('test'));
    const groups = await fetch(`${sb.apiServer.url}/apis`, { headers: { authorization: 'Bearer test' } }).then((r) => r.json() as Promise<{ groups: { name: string }[] }>);
    served = new Set(groups.groups.map((g) => g.name));
  });
  after(async () => sb.stop());

  const put = (path: string, body: unknown = {}) =>
    fetch(`${sb.storage!.virtApi.url}/apis/subresources.kubevirt.io/v1/namespaces/${NS}/${path}`, { method: 'PUT', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

  /** A VMI that virt-handler runs (launcher pod + the controller's hand-off played by hand). */
  async function runningVmi(name: string, annotations: Record<string, string> = {}, labels: Record<string, string> = {}, status: Record<string, unknown> = {}): Promise<Vmi> {
    const body = vmiBody(name);
    body.metadata = { ...body.metadata, annotations, labels };
    body.status = status;
    body.spec!.volumes = [...(body.spec!.volumes ?? []), { name: 'rootdisk', persistentVolumeClaim: { claimName: `${name}-disk` } }];
    const created = (await api.custom.createNamespacedCustomObject({ ...VMIS, namespace: NS, body })) as Vmi;
    const pod = await api.core.createNamespacedPod({ namespace: NS, body: launcherPod({ name, uid: created.metadata!.uid! }) });
    const running = await waitFor('launcher Running', async () => {
      const p = await getPod(api.core, pod.metadata!.name!);
      return p?.status?.phase === 'Running' && p;
    });
    // The VMI controller's hand-off: phase, node, the label virt-handler selects by, activePods, and
    // the claim's info (the VMI is non-root, virt-api's webhook: virt-handler's ownership step reads it).
    const node = running.spec!.nodeName!;
    const claimInfo = { claimName: `${name}-disk`, accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem', capacity: { storage: '1Gi' }, requests: { storage: '1Gi' }, filesystemOverhead: '0.055' };
    await patchVmi(api.custom, name, { status: { phase: 'Scheduled', nodeName: node, activePods: { [running.metadata!.uid!]: node }, volumeStatus: [{ name: 'rootdisk', target: '', persistentVolumeClaimInfo: claimInfo }] }, metadata: { labels: { 'kubevirt.io/nodeName': node } } });
    return vmiWhere(name, 'Running', (v) => v.status?.phase === 'Running');
  }
  const getVmi = async (name: string) => (await api.custom.getNamespacedCustomObject({ ...VMIS, namespace: NS, name })) as Vmi & { status?: Record<string, any> };
  const vmiWhere = (name: string, what: string, ok: (v: Vmi & { status?: Record<string, any> }) => boolean) =>
    waitFor(`VMI ${name} ${what}`, async () => {
      const v = await getVmi(name);
      return ok(v) && v;
    });

  test('virt-operator CAs: a TLS Secret and a ca-bundle ConfigMap each, valid PEM', async () => {
    for (const name of ['kubevirt-export-ca', 'kubevirt-backup-ca']) {
      const cm = await api.core.readNamespacedConfigMap({ namespace: 'kubevirt', name });
      const cert = new X509Certificate(cm.data!['ca-bundle']!);
      assert.ok(cert.ca, `${name} is a CA`);
      const secret = await api.core.readNamespacedSecret({ namespace: 'kubevirt', name });
      assert.equal(secret.type, 'kubernetes.io/tls');
      assert.equal(Buffer.from(secret.data!['tls.crt']!, 'base64').toString(), cm.data!['ca-bundle'], 'the bundle is the CA the Secret holds');
    }
  });

  test('exporter pod: Pending until its Secrets exist, then Running, then Succeeded at DEADLINE', async () => {
    // arrange: a pod shaped like the exporter (its label, its two secret volumes, DEADLINE)
    const deadline = new Date(sb.clock.nowMs() + 3_600_000).toISOString(); // 1 h simulated = 3.6 s real
    await api.core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: 'virt-export-e1', labels: { 'kubevirt.io.virt-export-service': 'e1' } },
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'exporter', image: 'quay.io/kubevirt/virt-exportserver:v1.9.0', env: [{ name: 'DEADLINE', value: deadline }], volumeMounts: [{ name: 'certificates', mountPath: '/cert' }, { name: 'token', mountPath: '/token' }] }],
          volumes: [{ name: 'certificates', secret: { secretName: 'secret-e1' } }, { name: 'token', secret: { secretName: 'export-token-e1' } }],
        },
      },
    });
    await waitFor('exporter scheduled', async () => (await getPod(api.core, 'virt-export-e1'))?.spec?.nodeName);
    await new Promise((r) => setTimeout(r, 300)); // well past podStartupMs at 1000x: it would have started
    assert.equal((await getPod(api.core, 'virt-export-e1'))?.status?.phase, 'Pending', 'no Secrets yet: still ContainerCreating');
    // act
    await api.core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'secret-e1' }, type: 'kubernetes.io/tls', data: {} } });
    await api.core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'export-token-e1' }, data: { token: Buffer.from('abc').toString('base64') } } });
    // assert
    const running = await waitFor('exporter Running', async () => {
      const p = await getPod(api.core, 'virt-export-e1');
      return p?.status?.phase === 'Running' && p;
    });
    assert.ok(running.status?.containerStatuses?.every((c) => c.ready), 'containers ready');
    const done = await waitFor('exporter Succeeded', async () => {
      const p = await getPod(api.core, 'virt-export-e1');
      return p?.status?.phase === 'Succeeded' && p;
    });
    assert.ok(sb.clock.nowMs() >= Date.parse(deadline), 'not before its deadline');
    assert.equal(done.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 0);
  });

  test('freeze and unfreeze through the guest agent; thawed after unfreezeTimeout', async () => {
    await runningVmi('fz');
    assert.equal((await put('virtualmachineinstances/fz/freeze', { unfreezeTimeout: '5m0s' })).status, 200);
    await vmiWhere('fz', 'frozen', (v) => v.status?.fsFreezeStatus === 'frozen');
    assert.equal((await put('virtualmachineinstances/fz/unfreeze')).status, 200);
    await vmiWhere('fz', 'thawed', (v) => v.status?.fsFreezeStatus === undefined);
    // left frozen: virt-handler thaws it when the timeout passes (5 min = 0.3 s at 1000x)
    assert.equal((await put('virtualmachineinstances/fz/freeze', { unfreezeTimeout: '5m0s' })).status, 200);
    await vmiWhere('fz', 'frozen again', (v) => v.status?.fsFreezeStatus === 'frozen');
    await vmiWhere('fz', 'thawed by the timeout', (v) => v.status?.fsFreezeStatus === undefined);
  });

  test('no guest agent: no AgentConnected condition, freeze answers an error; injected failures too', async () => {
    const vmi = await runningVmi('noagent', { [NO_GUEST_AGENT_ANNOTATION]: 'true' });
    assert.equal(vmi.status?.conditions?.some((c) => c.type === 'AgentConnected'), false);
    const res = await put('virtualmachineinstances/noagent/freeze', { unfreezeTimeout: '0s' });
    assert.equal(res.status, 500);
    assert.match(((await res.json()) as { message: string }).message, /Guest agent is not responding/);
    await runningVmi('vss');
    sb.storage!.virtApi.failUnfreeze(NS, 'vss', 'fsfreeze is limited to 10 seconds');
    assert.equal((await put('virtualmachineinstances/vss/freeze', { unfreezeTimeout: '0s' })).status, 200);
    const thaw = await put('virtualmachineinstances/vss/unfreeze');
    assert.equal(thaw.status, 500);
    assert.match(((await thaw.json()) as { message: string }).message, /fsfreeze is limited/);
  });

  test("pause and unpause: virt-handler's Paused condition added and removed; virt-api's refusals", async () => {
    await runningVmi('pz');
    assert.equal((await put('virtualmachineinstances/pz/unpause')).status, 409, 'not paused');
    assert.equal((await put('virtualmachineinstances/pz/pause')).status, 200);
    const paused = await vmiWhere('pz', 'paused', (v) => v.status?.conditions?.some((c) => c.type === 'Paused') === true);
    const again = await put('virtualmachineinstances/pz/pause');
    assert.equal(paused.status?.conditions?.find((c) => c.type === 'Paused')?.reason, 'PausedByUser');
    assert.equal(paused.status?.conditions?.find((c) => c.type === 'Paused')?.message, 'VMI was paused by user');
    assert.equal(again.status, 409);
    assert.match(((await again.json()) as { message: string }).message, /VMI is already paused/);
    assert.equal((await put('virtualmachineinstances/pz/unpause')).status, 200);
    await vmiWhere('pz', 'unpaused', (v) => !v.status?.conditions?.some((c) => c.type === 'Paused'));
    assert.equal((await put('virtualmachineinstances/nosuch/pause')).status, 404);
  });

  test('the subresource API through the API server, as its APIService serves it (KubeVirt calls it so): the emulator passes it to virt-api', async () => {
    await runningVmi('agg');
    const viaApiServer = (verb: string) =>
      fetch(`${sb.apiServer.url}/apis/subresources.kubevirt.io/v1/namespaces/${NS}/virtualmachineinstances/agg/${verb}`, { method: 'PUT', body: '{}', headers: { authorization: 'Bearer test', 'content-type': 'application/json' } });
    const paused = await viaApiServer('pause');
    await vmiWhere('agg', 'paused', (v) => v.status?.conditions?.some((c) => c.type === 'Paused') === true);
    const again = await viaApiServer('pause');
    assert.equal(paused.status, 200);
    assert.equal(again.status, 409, "virt-api's answer comes back as it is");
    assert.match(((await again.json()) as { message: string }).message, /already paused/);
    assert.ok(sb.storage!.virtApi.calls().includes(`PUT ${NS}/agg/pause`));
  });

  test('VM stop: Always becomes Halted; a halted VM is not running (409)', async () => {
    const VMS = { group: 'kubevirt.io', version: 'v1', plural: 'virtualmachines' } as const;
    await api.custom.createNamespacedCustomObject({ ...VMS, namespace: NS, body: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'stopme' }, spec: { runStrategy: 'Always', template: { spec: {} } } } });
    assert.equal((await put('virtualmachines/stopme/stop')).status, 202);
    const vm = (await api.custom.getNamespacedCustomObject({ ...VMS, namespace: NS, name: 'stopme' })) as { spec: { runStrategy: string } };
    assert.equal(vm.spec.runStrategy, 'Halted');
    assert.equal((await put('virtualmachines/stopme/stop')).status, 409);
    assert.equal((await put('virtualmachines/nosuchvm/stop')).status, 404);
  });

  test('backup: utility volume attached, backupStatus filled only after the controller wrote it, completed; abort; CBT', async () => {
    // CBT: the VM controller creates the VMI Initializing, virt-handler enables it once it runs.
    await runningVmi('bk', {}, {}, { changedBlockTracking: { state: 'Initializing' } });
    await vmiWhere('bk', 'CBT Enabled', (v) => v.status?.changedBlockTracking?.state === 'Enabled');
    await api.custom.patchNamespacedCustomObject({ ...VMIS, namespace: NS, name: 'bk', body: { spec: { utilityVolumes: [{ name: 'b1-backup-target-pvc', claimName: 'target', type: 'Backup' }] } } }, MERGE);
    await vmiWhere('bk', 'utility volume MountedToPod', (v) => v.status?.volumeStatus?.some((s: any) => s.name === 'b1-backup-target-pvc' && s.phase === 'MountedToPod' && s.hotplugVolume));
    // act: Start, then (as the controller does) the test-and-add of backupStatus
    assert.equal((await put('virtualmachineinstances/bk/backup', { backupName: 'b1', cmd: 'Start', mode: 'Push' })).status, 200);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await getVmi('bk')).status?.changedBlockTracking?.backupStatus, undefined, 'the handler never creates backupStatus itself');
    await patchVmi(api.custom, 'bk', { status: { changedBlockTracking: { backupStatus: { backupName: 'b1', startTimestamp: sb.clock.isoNow() } } } });
    // assert
    const done = await vmiWhere('bk', 'backup completed', (v) => v.status?.changedBlockTracking?.backupStatus?.completed === true);
    const bs = done.status!.changedBlockTracking.backupStatus;
    assert.deepEqual([bs.volumes, bs.checkpointName, bs.quiesceStatus, bs.failed], [[{ volumeName: 'rootdisk' }], 'b1', 'Succeeded', undefined]);
    // detach
    await api.custom.patchNamespacedCustomObject({ ...VMIS, namespace: NS, name: 'bk', body: { spec: { utilityVolumes: null } } }, MERGE);
    await vmiWhere('bk', 'utility volume detached', (v) => !v.status?.volumeStatus?.some((s: any) => s.name === 'b1-backup-target-pvc'));
    // abort a second one
    await patchVmi(api.custom, 'bk', { status: { changedBlockTracking: { backupStatus: null } } });
    assert.equal((await put('virtualmachineinstances/bk/backup', { backupName: 'b2', cmd: 'Start', mode: 'Pull' })).status, 200);
    assert.equal((await put('virtualmachineinstances/bk/backup', { backupName: 'b2', cmd: 'Abort' })).status, 200);
    await patchVmi(api.custom, 'bk', { status: { changedBlockTracking: { backupStatus: { backupName: 'b2', startTimestamp: sb.clock.isoNow() } } } });
    const aborted = await vmiWhere('bk', 'backup aborted', (v) => v.status?.changedBlockTracking?.backupStatus?.completed === true);
    assert.equal(aborted.status!.changedBlockTracking.backupStatus.failed, true);
    // redefine-checkpoint: 2xx, or 422 once the checkpoint is gone
    assert.equal((await put('virtualmachineinstances/bk/redefine-checkpoint', { name: 'b1' })).status, 200);
    sb.storage!.backup.rejectCheckpoints(NS, 'bk');
    const rejected = await put('virtualmachineinstances/bk/redefine-checkpoint', { name: 'b1' });
    assert.equal(rejected.status, 422);
  });

  test('CDI: a DataVolume gets its claim (owned), Succeeded once bound; a pre-populated one adopts the restored claim', async () => {
    await api.custom.createNamespacedCustomObject({ ...DVS, namespace: NS, body: { apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', metadata: { name: 'dv1' }, spec: { source: { blank: {} }, pvc: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } });
    const claim = await waitFor('claim of dv1', async () => api.core.readNamespacedPersistentVolumeClaim({ namespace: NS, name: 'dv1' }).catch(() => undefined));
    assert.equal(claim.metadata?.ownerReferences?.[0]?.kind, 'DataVolume');
    if (!served.has('storage.k8s.io')) {
      // No provisioner can run without PersistentVolumes and StorageClasses: bind by hand.
      await api.core.patchNamespacedPersistentVolumeClaimStatus({ namespace: NS, name: 'dv1', body: { status: { phase: 'Bound' } } }, MERGE);
    }
    await waitFor('dv1 Succeeded', async () => ((await api.custom.getNamespacedCustomObject({ ...DVS, namespace: NS, name: 'dv1' })) as { status?: { phase?: string } }).status?.phase === 'Succeeded');
    // a restore left claim `restored` for DataVolume `restored`
    await api.core.createNamespacedPersistentVolumeClaim({ namespace: NS, body: { metadata: { name: 'restored', annotations: { 'cdi.kubevirt.io/storage.populatedFor': 'restored' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } });
    const dv = (await api.custom.createNamespacedCustomObject({ ...DVS, namespace: NS, body: { apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', metadata: { name: 'restored', annotations: { 'cdi.kubevirt.io/storage.prePopulated': 'restored' } }, spec: { source: { blank: {} }, pvc: { resources: { requests: { storage: '1Gi' } } } } } })) as { metadata: { uid: string } };
    await waitFor('restored Succeeded', async () => ((await api.custom.getNamespacedCustomObject({ ...DVS, namespace: NS, name: 'restored' })) as { status?: { phase?: string } }).status?.phase === 'Succeeded');
    const adopted = await api.core.readNamespacedPersistentVolumeClaim({ namespace: NS, name: 'restored' });
    assert.deepEqual(adopted.metadata?.ownerReferences?.map((r) => [r.kind, r.uid, r.controller]), [['DataVolume', dv.metadata.uid, true]]);
  });

  test('provisioner and CSI snapshotter: Immediate binds, WFFC waits for a consumer, a snapshot gets ready, a claim restored from it binds', async (t) => {
    if (!served.has('storage.k8s.io') || !served.has('snapshot.storage.k8s.io')) {
      t.skip('this API server does not serve StorageClasses/PersistentVolumes or VolumeSnapshots');
      return;
    }
    const VS = { group: 'snapshot.storage.k8s.io', version: 'v1', plural: 'volumesnapshots' } as const;
    const claim = (name: string, spec: Record<string, unknown> = {}) => ({ metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec } });
    const phaseOf = async (name: string) => (await api.core.readNamespacedPersistentVolumeClaim({ namespace: NS, name })).status?.phase;
    // Immediate (the default class)
    await api.core.createNamespacedPersistentVolumeClaim({ namespace: NS, body: claim('imm') });
    await waitFor('imm Bound', async () => (await phaseOf('imm')) === 'Bound');
    const imm = await api.core.readNamespacedPersistentVolumeClaim({ namespace: NS, name: 'imm' });
    const pv = await api.core.readPersistentVolume({ name: imm.spec!.volumeName! });
    assert.deepEqual([pv.spec?.claimRef?.uid, pv.status?.phase, pv.spec?.storageClassName], [imm.metadata?.uid, 'Bound', 'sandbox-csi']);
    // WaitForFirstConsumer
    await api.core.createNamespacedPersistentVolumeClaim({ namespace: NS, body: claim('late', { storageClassName: 'sandbox-csi-wffc' }) });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(await phaseOf('late'), 'Pending', 'no consumer yet');
    assert.match(sb.storage!.provisioner.pendingReason(NS, 'late') ?? '', /first consumer/);
    await api.core.createNamespacedPod({ namespace: NS, body: { metadata: { name: 'consumer' }, spec: { containers: [{ name: 'c', image: 'x' }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'late' } }] } } });
    await waitFor('late Bound', async () => (await phaseOf('late')) === 'Bound');
    // snapshot of `imm`, then a claim restored from it
    await api.custom.createNamespacedCustomObject({ ...VS, namespace: NS, body: { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name: 'snap1' }, spec: { source: { persistentVolumeClaimName: 'imm' }, volumeSnapshotClassName: 'sandbox-csi-snapclass' } } });
    await api.core.createNamespacedPersistentVolumeClaim({ namespace: NS, body: claim('from-snap', { dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap1' }, dataSourceRef: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap1' } }) });
    const ready = await waitFor('snap1 ready', async () => {
      const s = (await api.custom.getNamespacedCustomObject({ ...VS, namespace: NS, name: 'snap1' })) as { status?: { readyToUse?: boolean; creationTime?: string; restoreSize?: string } };
      return s.status?.readyToUse === true && s;
    });
    assert.ok(ready.status?.creationTime, 'creationTime set');
    assert.equal(ready.status?.restoreSize, '1Gi');
    await waitFor('from-snap Bound', async () => (await phaseOf('from-snap')) === 'Bound');
    // an injected snapshotter error
    await api.custom.createNamespacedCustomObject({ ...VS, namespace: NS, body: { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name: 'snap2' }, spec: { source: { persistentVolumeClaimName: 'imm' }, volumeSnapshotClassName: 'sandbox-csi-snapclass' } } });
    sb.storage!.snapshotter.failSnapshot(NS, 'snap2', 'the driver is on fire');
    await waitFor('snap2 error', async () => ((await api.custom.getNamespacedCustomObject({ ...VS, namespace: NS, name: 'snap2' })) as { status?: { error?: { message?: string } } }).status?.error?.message === 'the driver is on fire');
    // a deleted claim releases its volume (reclaim Delete)
    await api.core.deleteNamespacedPersistentVolumeClaim({ namespace: NS, name: 'imm' });
    await waitFor('PV of imm deleted', async () => api.core.readPersistentVolume({ name: pv.metadata!.name! }).then(() => false, () => true));
  });
});
