/**
 * The migration reconcile against the sandbox API server, one pass at a time, the test playing
 * the kubelet (pod statuses), virt-handler (the VMI's migration state) and the Job controller (the
 * recovery Job's conditions); each case checks the ordered writes the controller made:
 * - a VMI with a hotplugged volume: the target's attachment pod once the target pod is ready
 *   (reference-vm-vmi-depth §3, KubeVirt's migration `createAttachmentPod`), the hand-off only
 *   once it is ready too (naming it), the migration failed when it ends;
 * - a backend-storage migration whose target pod disappears (§2 "Interrupted migration"): the
 *   `recover-<migration>` Job, and what each of its outcomes makes of the migration and the claims.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../../shared/api/index.ts';
import { JOBS, MIGRATIONS, NODES, PODS, PVCS, VMIS } from '../../../shared/api/resources.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { openSqliteState, type SqliteStateStore } from '../../../shared/state/sqlite-state.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';
import type { MigrationDeps } from '../../../functions/migration/deps.ts';
import { migrationDeps } from './support.ts';
import { reconcileMigration } from '../../../functions/migration/reconcile.ts';
import { auditActions, auditEvents } from '../../support/audit-actions.ts';

const CONTROLLER = 'migration-controller';
const NS = 'default';
const T0 = '2026-12-02T07:00:00Z';
let server: ApiServer;
let kube: KubeClient;
let state: SqliteStateStore;
let deps: MigrationDeps;
/** The virt-api calls the controller made (`verb target ns/name body`). */
let virtApiCalls: string[] = [];

beforeEach(async () => {
  server = await startApiServer({ port: 0 });
  kube = createKubeClient(server.kubeConfig('test'));
  state = openSqliteState();
  virtApiCalls = [];
  deps = migrationDeps(server, clusterConfigFromKubeVirt(undefined), CONTROLLER, state, { put: async (target, ns, name, verb, body) => { virtApiCalls.push(`${verb} ${target} ${ns}/${name} ${JSON.stringify(body)}`); } });
});
afterEach(async () => {
  await server.close();
});

let lastEvents: string[] = [];
/** The controller's writes since the last call, generated pod names generalised; its events kept for {@link events}. */
function actions(): string[] {
  const out = auditActions(server, CONTROLLER).map((a) => a.replace(/hp-volume-\w{5}/, 'hp-volume-*'));
  lastEvents = auditEvents(server, CONTROLLER).map((e) => e.replace(/hp-volume-\w{5}/, 'hp-volume-*'));
  server.audit.clear();
  return out;
}
/** The events among the writes the last {@link actions} call returned (`Type Reason: message`). */
function events(): string[] {
  if (auditActions(server, CONTROLLER).length > 0) actions();
  return lastEvents;
}
const run = (name: string) => reconcileMigration(`${NS}/${name}`, deps);

interface VmiOpts {
  /** A hotplugged PVC volume `data` (claim `data-pvc`), Ready on the source. */
  hotplug?: boolean;
  /** A persistent TPM on backend claim `src`. */
  backend?: boolean;
  migrationState?: Record<string, unknown>;
  /** An SR-IOV interface `vf` on Multus network `sriov-net`. */
  sriov?: boolean;
}

async function vmi(name: string, o: VmiOpts = {}): Promise<VirtualMachineInstance> {
  const volumes: unknown[] = [{ name: 'containerdisk', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo:v1.9.0' } }];
  const disks: unknown[] = [{ name: 'containerdisk', disk: { bus: 'virtio' } }];
  if (o.hotplug) {
    volumes.push({ name: 'data', persistentVolumeClaim: { claimName: 'data-pvc', hotpluggable: true } });
    disks.push({ name: 'data', disk: { bus: 'scsi' } });
  }
  const created = await kube.create(VMIS, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace: NS },
    spec: {
      domain: { devices: { disks, ...(o.backend ? { tpm: { persistent: true } } : {}), ...(o.sriov ? { interfaces: [{ name: 'vf', sriov: {} }] } : {}) }, resources: { requests: { memory: '128Mi' } } },
      volumes,
      ...(o.sriov ? { networks: [{ name: 'vf', multus: { networkName: 'sriov-net' } }] } : {}),
    },
  } as VirtualMachineInstance);
  const volumeStatus = [
    ...(o.backend ? [{ name: 'persistent-state-for-this-vm', target: '', persistentVolumeClaimInfo: { claimName: 'src' } }] : []),
    ...(o.hotplug ? [{ name: 'data', target: 'sda', phase: 'Ready', reason: 'VolumeReady', hotplugVolume: { attachPodName: 'hp-volume-src', attachPodUID: 'src-uid' }, persistentVolumeClaimInfo: { claimName: 'data-pvc' } }] : []),
  ];
  const status = { phase: 'Running', nodeName: 'node-a', selinuxContext: 'none', volumeStatus, ...(o.migrationState ? { migrationState: o.migrationState } : {}) };
  return kube.patch(VMIS, NS, name, { type: 'merge', body: { status } }).then(() => created);
}

/** Running (KubeVirt's IsPodReady: the compute container runs), or still starting (Pending). */
const RUNNING_STATUS = (ready: boolean) => ready
  ? { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'compute', ready, restartCount: 0, image: 'l', imageID: 'l@sha256:1', state: { running: { startedAt: T0 } } }] }
  : { phase: 'Pending', containerStatuses: [{ name: 'compute', ready, restartCount: 0, image: 'l', imageID: '', state: { waiting: { reason: 'ContainerCreating' } } }] };

/** A launcher pod of `v` on `node`; `migration` makes it that migration's target. */
async function launcher(v: VirtualMachineInstance, name: string, node: string, migration?: VirtualMachineInstanceMigration, ready = true): Promise<V1Pod> {
  const pod = await kube.create(PODS, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NS,
      labels: { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': v.metadata?.uid ?? '', ...(migration ? { 'kubevirt.io/migrationJobUID': migration.metadata?.uid ?? '' } : {}) },
      ...(migration ? { annotations: { 'kubevirt.io/migrationJobName': migration.metadata?.name ?? '' } } : {}),
      ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: v.metadata?.name ?? '', uid: v.metadata?.uid ?? '', controller: true }],
    },
    spec: { nodeName: node, containers: [{ name: 'compute', image: 'l' }], volumes: [{ name: 'containerdisk', emptyDir: {} }] },
  } as V1Pod);
  await kube.patch(PODS, NS, name, { type: 'merge', body: { status: RUNNING_STATUS(ready) } }, { subresource: 'status' });
  return pod;
}

async function claim(name: string, labels: Record<string, string> = {}, mode = 'ReadWriteOnce'): Promise<V1PersistentVolumeClaim> {
  const pvc = await kube.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: NS, labels }, spec: { accessModes: [mode], resources: { requests: { storage: '1Gi' } } } });
  await kube.patch(PVCS, NS, name, { type: 'merge', body: { status: { phase: 'Bound', accessModes: [mode] } } }, { subresource: 'status' });
  return pvc;
}

/** A migration of `vmiName` in `phase`, with what earlier passes wrote (finalizer, labels, source node). */
async function migration(name: string, vmiName: string, phase: string, migrationState: Record<string, unknown> = {}): Promise<VirtualMachineInstanceMigration> {
  const m = await kube.create(MIGRATIONS, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstanceMigration',
    metadata: {
      name,
      namespace: NS,
      labels: { 'kubevirt.io/vmi-name': vmiName },
      annotations: { 'kubevirt.io/latest-observed-api-version': 'v1', 'kubevirt.io/storage-observed-api-version': 'v1' },
      finalizers: ['kubevirt.io/migrationJobFinalize'],
    },
    spec: { vmiName },
  });
  return kube.update(MIGRATIONS, { ...m, status: { phase, phaseTransitionTimestamps: [{ phase, phaseTransitionTimestamp: T0 }], migrationState: { sourceNode: 'node-a', sourcePod: 'virt-launcher-src', ...migrationState } } } as VirtualMachineInstanceMigration, { subresource: 'status' });
}

const getMigration = async (name: string) => (await kube.get(MIGRATIONS, NS, name))!;
const attachmentPods = async () => (await kube.list(PODS, NS, { labelSelector: 'kubevirt.io=hotplug-disk' })).items;

describe('a VMI with a hotplugged volume: the target attachment pod', () => {
  test('created once the target pod is ready, for the VMI\'s hotplug set, bound to the target; the migration stays Pending', async () => {
    // arrange
    await claim('data-pvc', {}, 'ReadWriteMany');
    const v = await vmi('hp', { hotplug: true });
    await launcher(v, 'virt-launcher-src', 'node-a');
    const m = await migration('hp-mig', 'hp', 'Pending');
    const target = await launcher(v, 'virt-launcher-tgt', 'node-b', m, false);
    server.audit.clear();
    // act: the target pod not ready yet
    await run('hp-mig');
    // assert: nothing created before the target pod is ready
    assert.deepEqual(actions(), []);
    assert.equal((await attachmentPods()).length, 0);

    // arrange: the kubelet reports the target pod ready
    await kube.patch(PODS, NS, 'virt-launcher-tgt', { type: 'merge', body: { status: RUNNING_STATUS(true) } }, { subresource: 'status' });
    // act
    await run('hp-mig');
    // assert
    assert.deepEqual(actions(), ['create pods hp-volume-*', 'event SuccessfulCreate']);
    const [pod] = await attachmentPods();
    assert.deepEqual(pod?.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]), [['Pod', 'virt-launcher-tgt', target.metadata?.uid, true]], 'controlled by the target pod');
    assert.deepEqual(pod?.metadata?.labels, { 'kubevirt.io': 'hotplug-disk', 'kubevirt.io/migrationJobUID': m.metadata?.uid });
    assert.equal(pod?.metadata?.annotations?.['kubevirt.io/migrationJobName'], 'hp-mig');
    assert.equal(pod?.metadata?.annotations?.['kubevirt.io/owner-vmi-name'], 'hp');
    assert.deepEqual(pod?.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms?.[0]?.matchExpressions?.[0]?.values, ['node-b']);
    assert.deepEqual(pod?.spec?.volumes?.filter((x) => x.persistentVolumeClaim).map((x) => [x.name, x.persistentVolumeClaim?.claimName]), [['data', 'data-pvc']]);
    assert.ok(pod?.spec?.containers[0]?.volumeMounts?.some((x) => x.name === 'data' && x.mountPath === '/data'), 'mounted although Ready on the source: the statuses are reset');
    assert.deepEqual(events(), ['Normal SuccessfulCreate: Created attachment pod hp-volume-*']);
    assert.equal((await getMigration('hp-mig')).status?.phase, 'Pending', 'not Scheduling before the attachment pod is ready');

    // act: another pass while the attachment pod is not ready
    await run('hp-mig');
    // assert: no second pod, no hand-off
    assert.deepEqual(actions(), []);
    assert.equal((await attachmentPods()).length, 1);
  });

  test('handed off once the attachment pod is ready too, naming it in targetAttachmentPodUID', async () => {
    // arrange
    await claim('data-pvc', {}, 'ReadWriteMany');
    const v = await vmi('hp', { hotplug: true });
    await launcher(v, 'virt-launcher-src', 'node-a');
    const m = await migration('hp-mig', 'hp', 'Pending');
    await launcher(v, 'virt-launcher-tgt', 'node-b', m);
    await run('hp-mig');
    const [pod] = await attachmentPods();
    await kube.patch(PODS, NS, pod!.metadata!.name!, { type: 'merge', body: { status: { phase: 'Running', containerStatuses: [{ name: 'hotplug-disk', ready: true, restartCount: 0, image: 'l', imageID: 'l@sha256:1', state: { running: { startedAt: T0 } } }] } } }, { subresource: 'status' });
    server.audit.clear();
    // act
    await run('hp-mig');
    // assert
    assert.deepEqual(actions(), ['patch virtualmachineinstances hp', 'event SuccessfulHandOver', 'update virtualmachineinstancemigrations/status hp-mig']);
    const ms = (await kube.get(VMIS, NS, 'hp'))?.status?.migrationState;
    assert.deepEqual([ms?.targetPod, ms?.targetNode, ms?.targetAttachmentPodUID], ['virt-launcher-tgt', 'node-b', pod!.metadata?.uid]);
    const phases = (await getMigration('hp-mig')).status?.phaseTransitionTimestamps?.map((t) => t.phase);
    // (virt-handler's target node is set by the hand-off itself: PreparingTarget in the same pass)
    assert.deepEqual(phases, ['Pending', 'Scheduling', 'Scheduled', 'PreparingTarget']);
  });

  test('a target attachment pod that ends fails the migration', async () => {
    // arrange
    await claim('data-pvc', {}, 'ReadWriteMany');
    const v = await vmi('hp', { hotplug: true });
    await launcher(v, 'virt-launcher-src', 'node-a');
    const m = await migration('hp-mig', 'hp', 'Pending');
    await launcher(v, 'virt-launcher-tgt', 'node-b', m);
    await run('hp-mig');
    const [pod] = await attachmentPods();
    await kube.patch(PODS, NS, pod!.metadata!.name!, { type: 'merge', body: { status: { phase: 'Failed' } } }, { subresource: 'status' });
    server.audit.clear();
    // act
    await run('hp-mig');
    // assert
    assert.equal((await getMigration('hp-mig')).status?.phase, 'Failed');
    assert.deepEqual(events().slice(-1), ['Warning FailedMigration: Migration failed because target attachment pod shutdown during migration']);
  });

  test('a hotplug claim that is missing: no attachment pod, retried', async () => {
    // arrange: no data-pvc
    const v = await vmi('hp', { hotplug: true });
    await launcher(v, 'virt-launcher-src', 'node-a');
    const m = await migration('hp-mig', 'hp', 'Pending');
    await launcher(v, 'virt-launcher-tgt', 'node-b', m);
    server.audit.clear();
    // act
    const outcome = await run('hp-mig');
    // assert
    assert.deepEqual(actions(), []);
    assert.equal(outcome.kind, 'requeue');
  });
});

describe('an SR-IOV VMI: network-info on the target pod (KubeVirt updateTargetPodNetworkInfo)', () => {
  const netStatus = (address: string) => JSON.stringify([{ name: `${NS}/sriov-net`, interface: 'net1', mac: '02:00:00:00:00:01', 'device-info': { type: 'pci', version: '1.1.0', pci: { 'pci-address': address } } }]);

  test("annotated from the target's own VF before the hand-off", async () => {
    // arrange: Multus reports a VF on each pod
    const v = await vmi('sr', { sriov: true });
    await launcher(v, 'virt-launcher-src', 'node-a');
    await kube.patch(PODS, NS, 'virt-launcher-src', { type: 'merge', body: { metadata: { annotations: { 'k8s.v1.cni.cncf.io/network-status': netStatus('0000:01:00.2') } } } });
    const m = await migration('sr-mig', 'sr', 'Scheduled');
    await launcher(v, 'virt-launcher-tgt', 'node-b', m);
    await kube.patch(PODS, NS, 'virt-launcher-tgt', { type: 'merge', body: { metadata: { annotations: { 'k8s.v1.cni.cncf.io/network-status': netStatus('0000:3b:02.5') } } } });
    server.audit.clear();
    // act
    await run('sr-mig');
    // assert
    assert.deepEqual(actions().slice(0, 3), ['patch pods virt-launcher-tgt', 'patch virtualmachineinstances sr', 'event SuccessfulHandOver'], 'the annotation first, then the hand-off');
    const info = (await kube.get(PODS, NS, 'virt-launcher-tgt'))?.metadata?.annotations?.['kubevirt.io/network-info'];
    assert.deepEqual(JSON.parse(info ?? '{}'), { interfaces: [{ network: 'vf', deviceInfo: { type: 'pci', version: '1.1.0', pci: { 'pci-address': '0000:3b:02.5' } }, mac: '02:00:00:00:00:01' }] });
  });
});

describe('a backend-storage migration interrupted: the recovery Job', () => {
  /** A VMI with a persistent TPM handed off and Running on its migration, whose target pod is gone. */
  async function interrupted(opts: { shared?: boolean } = {}): Promise<VirtualMachineInstanceMigration> {
    await claim('src', { 'persistent-state-for': 'tpm' }, opts.shared ? 'ReadWriteMany' : 'ReadWriteOnce');
    if (!opts.shared) await claim('tgt', { 'kubevirt.io/migrationName': 'tpm-mig' });
    const pvcs = { sourcePersistentStatePVCName: 'src', targetPersistentStatePVCName: opts.shared ? 'src' : 'tgt' };
    const m = await migration('tpm-mig', 'tpm', 'Running', pvcs);
    const v = await vmi('tpm', { backend: true, migrationState: { migrationUid: m.metadata?.uid, targetNode: 'node-b', targetPod: 'virt-launcher-tgt', sourceNode: 'node-a', targetNodeAddress: '10.0.0.2', startTimestamp: T0, ...pvcs } });
    await launcher(v, 'virt-launcher-src', 'node-a');
    server.audit.clear();
    return m;
  }
  async function jobConditions(conditions: Record<string, string>[]): Promise<void> {
    const job = (await kube.get(JOBS, NS, 'recover-tpm-mig'))!;
    await kube.update(JOBS, { ...job, status: { conditions: conditions.map((c) => ({ status: 'True', lastTransitionTime: T0, lastProbeTime: T0, ...c })) } } as unknown as V1Job, { subresource: 'status' });
    server.audit.clear();
  }

  test('the Job is created as KubeVirt builds it; the migration waits for it', async () => {
    // arrange
    const m = await interrupted();
    // act
    const outcome = await run('tpm-mig');
    // assert
    assert.deepEqual(actions(), ['create jobs recover-tpm-mig']);
    assert.equal(outcome.kind, 'requeue');
    assert.equal((await getMigration('tpm-mig')).status?.phase, 'Running', 'not failed while the Job looks');
    const job = (await kube.get(JOBS, NS, 'recover-tpm-mig'))!;
    assert.deepEqual(job.metadata?.ownerReferences?.map((r) => [r.apiVersion, r.kind, r.name, r.uid, r.controller, r.blockOwnerDeletion]), [['kubevirt.io/v1', 'VirtualMachineInstanceMigration', 'tpm-mig', m.metadata?.uid, true, true]]);
    assert.deepEqual([job.spec?.activeDeadlineSeconds, job.spec?.backoffLimit, job.spec?.ttlSecondsAfterFinished], [30, 0, 30]);
    const tpl = job.spec?.template;
    assert.equal(tpl?.metadata?.generateName, 'recover-tpm-mig-');
    assert.deepEqual([tpl?.spec?.restartPolicy, tpl?.spec?.securityContext?.runAsNonRoot, tpl?.spec?.securityContext?.seccompProfile?.type], ['Never', true, 'RuntimeDefault']);
    const c = tpl?.spec?.containers[0];
    assert.deepEqual([c?.name, c?.image, c?.command, c?.args], ['container', clusterConfigFromKubeVirt(undefined).launcherImage, ['bash'], ['-c', 'ls /meta/migrated || exit 42']]);
    assert.deepEqual([c?.securityContext?.allowPrivilegeEscalation, c?.securityContext?.capabilities?.drop], [false, ['ALL']]);
    assert.deepEqual(c?.volumeMounts?.map((x) => [x.name, x.mountPath, x.subPath]), [['backend-storage', '/meta', 'meta']]);
    assert.deepEqual(tpl?.spec?.volumes?.map((x) => [x.name, x.persistentVolumeClaim?.claimName]), [['backend-storage', 'src']]);

    // act: the Job still runs
    await run('tpm-mig');
    // assert: nothing but a read
    assert.deepEqual(actions(), []);
  });

  test('Job complete: the target claim handed over, the source deleted, Succeeded (the interruption still reported)', async () => {
    // arrange
    await interrupted();
    await run('tpm-mig');
    await jobConditions([{ type: 'SuccessCriteriaMet', reason: 'CompletionsReached' }, { type: 'Complete', reason: 'CompletionsReached' }]);
    // act
    await run('tpm-mig');
    // assert
    assert.deepEqual(actions(), [
      'patch persistentvolumeclaims tgt',
      'delete persistentvolumeclaims src',
      'event FailedMigration',
      'update virtualmachineinstancemigrations/status tpm-mig',
      'update virtualmachineinstancemigrations tpm-mig',
    ]);
    const m = await getMigration('tpm-mig');
    assert.equal(m.status?.phase, 'Succeeded');
    assert.deepEqual(m.metadata?.finalizers ?? [], []);
    assert.deepEqual((await kube.get(PVCS, NS, 'tgt'))?.metadata?.labels, { 'persistent-state-for': 'tpm' });
    assert.equal(await kube.get(PVCS, NS, 'src'), undefined);
    assert.deepEqual(events().slice(-1), ['Warning FailedMigration: Migration target pod was removed during active migration.']);
  });

  test('Job failed by its pod failure policy (no marker): the target claim deleted, Failed', async () => {
    // arrange
    await interrupted();
    await run('tpm-mig');
    await jobConditions([{ type: 'FailureTarget', reason: 'PodFailurePolicy' }, { type: 'Failed', reason: 'PodFailurePolicy', message: 'Container container for pod default/recover-tpm-mig-x failed with exit code 42 matching FailJob rule at index 0' }]);
    // act
    await run('tpm-mig');
    // assert
    assert.deepEqual(actions(), ['event FailedMigration', 'delete persistentvolumeclaims tgt', 'update virtualmachineinstancemigrations/status tpm-mig', 'update virtualmachineinstancemigrations tpm-mig']);
    assert.equal((await getMigration('tpm-mig')).status?.phase, 'Failed');
    assert.equal(await kube.get(PVCS, NS, 'tgt'), undefined);
    assert.deepEqual((await kube.get(PVCS, NS, 'src'))?.metadata?.labels, { 'persistent-state-for': 'tpm' }, 'the source stays the VMI\'s');
    assert.deepEqual(events().slice(-1), ['Warning FailedMigration: Migration target pod was removed during active migration.']);
  });

  test('Job failed for another reason (its deadline): deleted to be made again, the migration unchanged', async () => {
    // arrange
    await interrupted();
    await run('tpm-mig');
    await jobConditions([{ type: 'FailureTarget', reason: 'DeadlineExceeded' }, { type: 'Failed', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' }]);
    // act
    await run('tpm-mig');
    // assert
    assert.deepEqual(actions(), ['delete jobs recover-tpm-mig']);
    assert.equal((await getMigration('tpm-mig')).status?.phase, 'Running');
    assert.ok(await kube.get(PVCS, NS, 'tgt'), 'the target claim kept');
  });

  test('a shared (ReadWriteMany) claim needs no recovery: Failed at once, no Job', async () => {
    // arrange
    await interrupted({ shared: true });
    // act
    await run('tpm-mig');
    // assert
    assert.equal((await getMigration('tpm-mig')).status?.phase, 'Failed');
    assert.equal(await kube.get(JOBS, NS, 'recover-tpm-mig'), undefined);
    assert.ok(!actions().some((a) => a.includes('jobs')));
  });
});

/** A running VMI with no disks to pin (so its target pod renders from any source pod), with `status` and `spec` merged. */
async function plainVmi(name: string, status: Record<string, unknown> = {}, spec: Record<string, unknown> = {}, annotations?: Record<string, string>): Promise<VirtualMachineInstance> {
  const created = await kube.create(VMIS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, namespace: NS, ...(annotations && { annotations }) }, spec: { domain: { devices: {}, resources: { requests: { memory: '128Mi' } } }, ...spec } } as VirtualMachineInstance);
  await kube.patch(VMIS, NS, name, { type: 'merge', body: { status: { phase: 'Running', nodeName: 'node-a', selinuxContext: 'none', runtimeUser: 107, ...status } } });
  return created;
}
const conditionsOf = async (name: string) => ((await getMigration(name)).status?.conditions ?? []).map((c) => [c.type, c.status, c.reason ?? '', c.message ?? ''].join(' | ').replace(/ \| $/, '').replace(/ \| $/, ''));
const targetPods = async (m: VirtualMachineInstanceMigration) => (await kube.list(PODS, NS, { labelSelector: `kubevirt.io/migrationJobUID=${m.metadata?.uid}` })).items;

describe('what holds a migration in Pending (KubeVirt handleVMBackup, handleUtilityVolumes, exceeded quota)', () => {
  // The VMIs carry a backup status but no CBT state: CBT's backend storage is another test's matter.
  test('a running backup: no target pod, migrationBlockedByBackup "Waiting for backup … to complete"; once it completed the target pod is created and the condition goes', async () => {
    // arrange
    const v = await plainVmi('bk', { changedBlockTracking: { backupStatus: { backupName: 'nightly' } } });
    await launcher(v, 'virt-launcher-src', 'node-a');
    const m = await migration('bk-mig', 'bk', 'Pending');
    // act
    await run('bk-mig');
    // assert
    assert.equal((await targetPods(m)).length, 0);
    assert.equal((await getMigration('bk-mig')).status?.phase, 'Pending');
    assert.deepEqual(await conditionsOf('bk-mig'), ['migrationBlockedByBackup | True | BackupInProgress | Waiting for backup nightly to complete']);
    assert.deepEqual(virtApiCalls, [], 'an ordinary migration waits, it does not abort');

    // arrange: virt-handler reports the backup completed
    await kube.patch(VMIS, NS, 'bk', { type: 'merge', body: { status: { changedBlockTracking: { backupStatus: { backupName: 'nightly', completed: true } } } } });
    // act
    await run('bk-mig');
    // assert
    assert.equal((await targetPods(m)).length, 1, `the target pod now: ${actions().join(', ')} ${events().join(', ')}`);
    assert.deepEqual(await conditionsOf('bk-mig'), []);
  });

  test('a system-critical migration aborts the backup through virt-api, once, and says so', async () => {
    // arrange
    const v = await plainVmi('bkc', { changedBlockTracking: { backupStatus: { backupName: 'nightly', startTimestamp: T0 } } });
    await launcher(v, 'virt-launcher-src', 'node-a');
    const m = await migration('bkc-mig', 'bkc', 'Pending');
    await kube.patch(MIGRATIONS, NS, 'bkc-mig', { type: 'merge', body: { spec: { priority: 'system-critical' } } });
    // act
    await run('bkc-mig');
    await run('bkc-mig');
    // assert
    assert.deepEqual(virtApiCalls, [`backup virtualmachineinstances ${NS}/bkc {"backupName":"nightly","cmd":"Abort","backupStartTime":"${T0}"}`]);
    assert.ok(events().includes('Normal BackupAbortedForMigration: Aborting backup nightly for system-critical migration'), events().join('\n'));
    assert.deepEqual(await conditionsOf('bkc-mig'), ['migrationBlockedByBackup | True | BackupInProgress | Aborting backup nightly for system-critical migration']);
    assert.equal((await targetPods(m)).length, 0);
  });

  test('utility volumes: no target pod, a Warning each pass, migrationBlockedByUtilityVolumes once; past the timeout Failed with KubeVirt\'s message', async () => {
    // arrange
    const v = await plainVmi('uv', {}, { utilityVolumes: [{ name: 'bk-target', persistentVolumeClaim: { claimName: 'bk-target' } }] });
    await launcher(v, 'virt-launcher-src', 'node-a');
    const m = await migration('uv-mig', 'uv', 'Pending');
    server.audit.clear();
    // act
    await run('uv-mig');
    // assert
    assert.equal((await targetPods(m)).length, 0);
    assert.equal((await getMigration('uv-mig')).status?.phase, 'Pending');
    assert.match(events().find((e) => e.includes('UtilityVolumeMigrationPending')) ?? '', new RegExp(`^Warning UtilityVolumeMigrationPending: Migration waiting for utility volumes to detach from VMI \\[${NS}/uv\\]\\. Will timeout in 1[45]\\d seconds\\.$`));
    const [cond] = (await getMigration('uv-mig')).status?.conditions ?? [];
    assert.deepEqual([cond?.type, cond?.status, cond?.reason], ['migrationBlockedByUtilityVolumes', 'True', 'UtilityVolumesPresent']);
    assert.match(cond?.message ?? '', /^Migration is waiting for utility volumes to detach\. Will timeout in \d+ seconds\.$/);

    // arrange: a timeout of 0 s on the migration
    await kube.patch(MIGRATIONS, NS, 'uv-mig', { type: 'merge', body: { metadata: { annotations: { 'kubevirt.io/migrationUtilityVolumesTimeoutSeconds': '0' } } } });
    // act
    await run('uv-mig');
    // assert
    assert.equal((await getMigration('uv-mig')).status?.phase, 'Failed');
    assert.match(events().at(-1) ?? '', new RegExp(`^Warning FailedMigration: Migration timeout waiting for utility volumes to detach from VMI \\[${NS}/uv\\]\\. Utility volumes still present after \\d+ seconds\\.$`));
  });

  test('a target pod refused by a ResourceQuota: migrationRejectedByResourceQuota, Pending; created later, the condition goes with Pending', async () => {
    // arrange: kube-apiserver's ResourceQuota admission (the emulator checks no usage) refuses the first create
    const v = await plainVmi('rq');
    await launcher(v, 'virt-launcher-src', 'node-a');
    const m = await migration('rq-mig', 'rq', 'Pending');
    let refuse = true;
    const real = deps.kube;
    const quotaMessage = 'pods "virt-launcher-rq-x" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=1, limited: pods=1';
    deps = { ...deps, kube: { ...real, create: (async (res: never, obj: never) => {
      if (refuse && (obj as V1Pod).kind === 'Pod') throw new Error(quotaMessage);
      return real.create(res, obj);
    }) as KubeClient['create'] } };
    // act
    await run('rq-mig');
    // assert
    assert.equal((await getMigration('rq-mig')).status?.phase, 'Pending');
    assert.deepEqual(await conditionsOf('rq-mig'), ['migrationRejectedByResourceQuota | True']);
    assert.ok(events().includes(`Warning FailedCreate: Error creating pod: ${quotaMessage}`), events().join('\n'));
    assert.deepEqual(await state.leases.holders('migrations/cluster', Date.now()), [], 'the slot given back');

    // arrange: the quota raised
    refuse = false;
    // act
    await run('rq-mig');
    // assert
    assert.equal((await targetPods(m)).length, 1);
    assert.equal((await getMigration('rq-mig')).status?.phase, 'Scheduling');
    assert.deepEqual(await conditionsOf('rq-mig'), []);
  });
});

describe('the runtime user before the target pod (KubeVirt setupVMIRuntimeUser)', () => {
  const rows: { name: string; root: boolean; user: number; annotations?: Record<string, string>; wantUser: number; wantAnnotation: string | undefined }[] = [
    { name: 'root VMI, non-root cluster → 107 and kubevirt.io/nonroot', root: false, user: 0, wantUser: 107, wantAnnotation: 'true' },
    { name: 'non-root VMI, non-root cluster, no annotation yet → the annotation only', root: false, user: 107, wantUser: 107, wantAnnotation: 'true' },
    { name: 'non-root VMI, Root gate on → 0, the annotation removed', root: true, user: 107, annotations: { 'kubevirt.io/nonroot': 'true' }, wantUser: 0, wantAnnotation: undefined },
  ];
  for (const r of rows) {
    test(r.name, async () => {
      // arrange
      const config = clusterConfigFromKubeVirt(r.root ? { spec: { configuration: { developerConfiguration: { featureGates: ['Root'] } } } } as never : undefined);
      deps = { ...deps, clusterConfig: async () => config };
      const v = await plainVmi('ru', { runtimeUser: r.user }, {}, r.annotations);
      await launcher(v, 'virt-launcher-src', 'node-a');
      const m = await migration('ru-mig', 'ru', 'Pending');
      // act
      await run('ru-mig');
      // assert
      const after = await kube.get(VMIS, NS, 'ru');
      assert.deepEqual([after?.status?.runtimeUser, after?.metadata?.annotations?.['kubevirt.io/nonroot']], [r.wantUser, r.wantAnnotation]);
      const [target] = await targetPods(m);
      const compute = target?.spec?.containers.find((c) => c.name === 'compute');
      assert.equal(compute?.securityContext?.runAsUser ?? target?.spec?.securityContext?.runAsUser ?? 0, r.wantUser, 'the target pod rendered for the new user');
    });
  }
});

describe('an unschedulable host-model target (KubeVirt alertIfHostModelIsUnschedulable)', () => {
  const MODEL = 'cpu-model-migration.node.kubevirt.io/Skylake';
  async function unschedulableTarget(): Promise<void> {
    const v = await plainVmi('hm', {}, { domain: { cpu: { model: 'host-model' }, devices: {}, resources: { requests: { memory: '128Mi' } } } });
    await launcher(v, 'virt-launcher-src', 'node-a');
    const m = await migration('hm-mig', 'hm', 'Scheduling');
    const target = await launcher(v, 'virt-launcher-tgt', '', m, false);
    await kube.patch(PODS, NS, target.metadata!.name!, { type: 'json', ops: [{ op: 'remove', path: '/spec/nodeName' }, { op: 'add', path: '/spec/nodeSelector', value: { [MODEL]: 'true', 'kubevirt.io/schedulable': 'true' } }] }).catch(() => undefined);
    await kube.patch(PODS, NS, target.metadata!.name!, { type: 'merge', body: { status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/2 nodes are available' }] } } }, { subresource: 'status' });
  }
  const node = (name: string, labels: Record<string, string>) => kube.create(NODES, { apiVersion: 'v1', kind: 'Node', metadata: { name, labels } });

  test('no other node with its CPU model → Warning NoSuitableNodesForHostModelMigration on the VMI, with the required labels', async () => {
    // arrange: the source node has the model, the other one not
    await node('node-a', { [MODEL]: 'true' });
    await node('node-b', {});
    await unschedulableTarget();
    server.audit.clear();
    // act
    await run('hm-mig');
    // assert
    assert.ok(events().includes(`Warning NoSuitableNodesForHostModelMigration: Migration cannot proceed since no node is suitable to run the required CPU model / required features: map[${MODEL}:true]`), events().join('\n'));
    assert.ok(events().some((e) => e.startsWith('Warning migrationTargetPodUnschedulable')), 'the migration\'s own warning still');
  });

  test('another node with it → no such warning', async () => {
    // arrange
    await node('node-a', { [MODEL]: 'true' });
    await node('node-b', { [MODEL]: 'true' });
    await unschedulableTarget();
    server.audit.clear();
    // act
    await run('hm-mig');
    // assert
    assert.ok(!events().some((e) => e.includes('NoSuitableNodesForHostModelMigration')), events().join('\n'));
  });
});

describe('the target pod\'s migration-target-ready-timestamp (KubeVirt updateStatus, Running)', () => {
  const READY = '2026-12-02T07:00:05Z';

  test('a Running migration whose target domain is ready: the target pod annotated once, with Go\'s time format', async () => {
    // arrange: virt-handler reported the target domain ready; the migration is running
    const m = await migration('rt-mig', 'rt', 'Running');
    const v = await vmi('rt', { migrationState: { migrationUid: m.metadata?.uid, sourceNode: 'node-a', targetNode: 'node-b', targetNodeAddress: '10.0.0.2', targetPod: 'virt-launcher-tgt', startTimestamp: T0, targetNodeDomainReadyTimestamp: READY } });
    await launcher(v, 'virt-launcher-src', 'node-a');
    await launcher(v, 'virt-launcher-tgt', 'node-b', m);
    server.audit.clear();
    // act
    await run('rt-mig');
    const first = actions();
    await run('rt-mig');
    const second = actions();
    // assert
    assert.ok(first.includes('patch pods virt-launcher-tgt'), `the target pod is patched: ${JSON.stringify(first)}`);
    const annotations = (await kube.get(PODS, NS, 'virt-launcher-tgt'))?.metadata?.annotations ?? {};
    assert.equal(annotations['kubevirt.io/migration-target-ready-timestamp'], '2026-12-02 07:00:05 +0000 UTC');
    assert.equal(annotations['kubevirt.io/migrationJobName'], 'rt-mig', 'the other annotations stay');
    assert.ok(!second.includes('patch pods virt-launcher-tgt'), `annotated already: not patched again: ${JSON.stringify(second)}`);
  });

  test('no targetNodeDomainReadyTimestamp yet: the target pod is left alone', async () => {
    // arrange
    const m = await migration('rn-mig', 'rn', 'Running');
    const v = await vmi('rn', { migrationState: { migrationUid: m.metadata?.uid, sourceNode: 'node-a', targetNode: 'node-b', targetNodeAddress: '10.0.0.2', targetPod: 'virt-launcher-tgt', startTimestamp: T0 } });
    await launcher(v, 'virt-launcher-src', 'node-a');
    await launcher(v, 'virt-launcher-tgt', 'node-b', m);
    server.audit.clear();
    // act
    await run('rn-mig');
    // assert
    assert.ok(!actions().includes('patch pods virt-launcher-tgt'), 'nothing to tell the target pod yet');
    assert.equal((await kube.get(PODS, NS, 'virt-launcher-tgt'))?.metadata?.annotations?.['kubevirt.io/migration-target-ready-timestamp'], undefined);
  });
});
