/**
 * The backup reconcile against the sandbox API server (reference-snapshot-export-backup.md §4):
 * the test plays virt-handler (the VMI's CBT state, the utility volume attaching and detaching,
 * `backupStatus` progress) and virt-api (a recording fake of the `backup` and
 * `redefine-checkpoint` subresources), and checks what the controller wrote.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import type { VirtualMachineBackup, VirtualMachineBackupTracker } from '../../../shared/api/backup.ts';
import { PVCS, VM_BACKUP_TRACKERS, VM_BACKUPS, VMIS, VMS } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import type { BackupDeps } from '../../../functions/backup/deps.ts';
import { reconcileBackup } from '../../../functions/backup/reconcile.ts';
import { auditActions, auditEvents } from '../../support/audit-actions.ts';
import { vmManifest } from '../../e2e/support.ts';
import { decorateKubeClient } from '../../../shared/kube/call-counter.ts';
import { WorkerCrash } from '../../../shared/reconcile/worker-crash.ts';

const CONTROLLER = 'backup-controller';
const NS = 'default';
let server: ApiServer;
let kube: KubeClient;
let deps: BackupDeps;
let calls: { verb: string; name: string; body: Record<string, unknown> }[];
let refuse: { code: number; message: string } | undefined;

before(async () => {
  server = await startApiServer({ port: 0 });
  kube = createKubeClient(server.kubeConfig('test'));
});
after(async () => {
  await server.close();
});
beforeEach(() => {
  calls = [];
  refuse = undefined;
  deps = {
    kube: createKubeClient(server.kubeConfig(CONTROLLER)),
    virtApi: {
      async put(_target, _ns, name, verb, body) {
        calls.push({ verb, name, body: body as Record<string, unknown> });
        if (refuse) throw Object.assign(new Error(refuse.message), { code: refuse.code });
      },
    },
    now: () => Date.now(),
    log: { info: () => undefined, warn: () => undefined },
  };
  server.audit.clear();
});

const key = (n: string) => `${NS}/${n}`;
const actions = () => auditActions(server, CONTROLLER);
const events = () => auditEvents(server, CONTROLLER);
const getBackup = async (n: string) => (await kube.get(VM_BACKUPS, NS, n))!;
const conds = (b: VirtualMachineBackup) => (b.status?.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`);
const backupManifest = (name: string, source: VirtualMachineBackup['spec']['source'], spec: Partial<VirtualMachineBackup['spec']> = {}): VirtualMachineBackup => ({
  apiVersion: 'backup.kubevirt.io/v1alpha1',
  kind: 'VirtualMachineBackup',
  metadata: { name, namespace: NS },
  spec: { source, pvcName: `${name}-target`, ...spec },
});
const vmSource = (name: string) => ({ apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name });
const trackerSource = (name: string) => ({ apiGroup: 'backup.kubevirt.io', kind: 'VirtualMachineBackupTracker', name });

/** A VM, its VMI in `phase` with a PVC volume and (unless told) CBT Enabled: what virt-handler leaves. */
async function runningVm(name: string, o: { cbt?: boolean; volumes?: boolean; vmi?: boolean; status?: Record<string, unknown> } = {}): Promise<void> {
  await kube.create(VMS, vmManifest(name, { runStrategy: 'Always' }));
  if (o.vmi === false) return;
  const volumes = o.volumes === false ? [{ name: 'cd', containerDisk: { image: 'x' } }] : [{ name: 'disk', persistentVolumeClaim: { claimName: `${name}-disk` } }];
  await kube.create(VMIS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, namespace: NS }, spec: { domain: { devices: {} }, volumes } } as never);
  await patchVmi(name, { status: { phase: 'Running', ...(o.cbt === false ? {} : { changedBlockTracking: { state: 'Enabled' } }), ...o.status } });
}
async function patchVmi(name: string, body: Record<string, unknown>): Promise<void> {
  await kube.patch(VMIS, NS, name, { type: 'merge', body });
}
const getVmi = async (name: string) => (await kube.get(VMIS, NS, name))! as VirtualMachineInstance & { spec: { utilityVolumes?: { name: string; claimName: string; type: string }[] } };
async function targetPvc(name: string, volumeMode?: string): Promise<void> {
  await kube.create(PVCS, { metadata: { name, namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...(volumeMode ? { volumeMode } : {}) } });
}
/** Plays virt-handler: the utility volume is attached. */
async function attach(vmi: string, volume: string): Promise<void> {
  await patchVmi(vmi, { status: { volumeStatus: [{ name: volume, phase: 'MountedToPod', hotplugVolume: { attachPodName: 'hp' }, target: '' }] } });
}
/** Plays virt-handler: backupStatus fields. */
async function progress(vmi: string, fields: Record<string, unknown>): Promise<void> {
  const bs = (await getVmi(vmi)).status?.changedBlockTracking?.backupStatus;
  await patchVmi(vmi, { status: { changedBlockTracking: { state: 'Enabled', backupStatus: { ...bs, ...fields } } } });
}
async function run(name: string): Promise<'done' | string> {
  try {
    return (await reconcileBackup(key(name), deps)).kind;
  } catch (err) {
    return `error: ${(err as Error).message}`;
  }
}
/** Starts a backup to the point where virt-handler runs it (finalizer, target attached, Start sent). */
async function started(name: string, vm: string, spec: Partial<VirtualMachineBackup['spec']> = {}, source = vmSource(vm)): Promise<void> {
  await runningVm(vm);
  await targetPvc(`${name}-target`);
  await kube.create(VM_BACKUPS, backupManifest(name, source, spec));
  await run(name);
  await attach(vm, `${name}-backup-target-pvc`);
  assert.equal(await run(name), 'done');
}

describe('backup start: prerequisites, each as Progressing=True Initializing with its text', () => {
  const cases = [
    { name: 'no VM', setup: async () => undefined, want: 'VM default/pre-novm-vm doesnt exist' },
    { name: 'no VMI', setup: (vm: string) => runningVm(vm, { vmi: false }), want: 'vm pre-novmi-vm is not running, cannot do backup' },
    { name: 'no volumes', setup: (vm: string) => runningVm(vm, { volumes: false }), want: 'vm pre-novol-vm has no volumes to backup' },
    { name: 'no CBT', setup: (vm: string) => runningVm(vm, { cbt: false }), want: 'vm pre-nocbt-vm has no ChangedBlockTracking, cannot start backup' },
    { name: 'migrating', setup: (vm: string) => runningVm(vm, { status: { migrationState: { startTimestamp: '2020-01-01T00:00:00Z' } } }), want: 'vm pre-mig-vm is currently migrating, waiting for migration to complete before starting backup' },
  ];
  for (const c of cases) {
    const id = `pre-${c.name === 'no VM' ? 'novm' : c.name === 'no VMI' ? 'novmi' : c.name === 'no volumes' ? 'novol' : c.name === 'no CBT' ? 'nocbt' : 'mig'}`;
    test(c.name, async () => {
      // arrange
      await c.setup(`${id}-vm`);
      await kube.create(VM_BACKUPS, backupManifest(id, vmSource(`${id}-vm`)));
      // act
      const out = await run(id);
      // assert
      assert.equal(out, 'done');
      const b = await getBackup(id);
      assert.deepEqual(conds(b), [`Progressing=True Initializing: ${c.want}`]);
      assert.deepEqual(b.metadata?.finalizers ?? [], [], 'no finalizer before the start');
      assert.deepEqual(calls, []);
    });
  }

  test('a tracker source that does not exist; a tracker waiting for its checkpoint redefinition', async () => {
    // arrange
    await kube.create(VM_BACKUPS, backupManifest('pre-notracker', trackerSource('no-tracker')));
    await runningVm('pre-redef-vm');
    await kube.create(VM_BACKUP_TRACKERS, { apiVersion: 'backup.kubevirt.io/v1alpha1', kind: 'VirtualMachineBackupTracker', metadata: { name: 'pre-redef-t', namespace: NS }, spec: { source: vmSource('pre-redef-vm') } });
    await kube.patch(VM_BACKUP_TRACKERS, NS, 'pre-redef-t', { type: 'merge', body: { status: { checkpointRedefinitionRequired: true, latestCheckpoint: { name: 'cp1' } } } }, { subresource: 'status' });
    await kube.create(VM_BACKUPS, backupManifest('pre-redef', trackerSource('pre-redef-t')));
    refuse = { code: 500, message: 'virt-handler busy' };
    // act
    const outs = [await run('pre-notracker'), await run('pre-redef')];
    // assert
    assert.deepEqual(outs, ['done', 'done']);
    assert.deepEqual(conds(await getBackup('pre-notracker')), ['Progressing=True Initializing: BackupTracker no-tracker does not exist']);
    assert.deepEqual(conds(await getBackup('pre-redef')), ['Progressing=True Initializing: Waiting for checkpoint redefinition on tracker pre-redef-t']);
  });

  test('the target claim: missing waits; block mode is an error; no pvcName is an error', async () => {
    // arrange
    await runningVm('tgt-vm');
    await kube.create(VM_BACKUPS, backupManifest('tgt-missing', vmSource('tgt-vm')));
    await targetPvc('tgt-block-target', 'Block');
    await kube.create(VM_BACKUPS, backupManifest('tgt-block', vmSource('tgt-vm')));
    await kube.create(VM_BACKUPS, { ...backupManifest('tgt-nil', vmSource('tgt-vm')), spec: { source: vmSource('tgt-vm') } });
    // act
    const outs = [await run('tgt-missing'), await run('tgt-block'), await run('tgt-nil')];
    // assert
    assert.deepEqual(outs, ['done', 'error: backup target PVC must be a filesystem PVC, provided pvc default/tgt-block-target is block', 'error: backup target PVC name is nil']);
    assert.deepEqual(conds(await getBackup('tgt-missing')), ['Progressing=True Initializing: PVC default/tgt-missing-target doesnt exist']);
    assert.deepEqual((await getBackup('tgt-missing')).metadata?.finalizers, ['backup.kubevirt.io/vmbackup-protection'], 'the finalizer comes before the claim check');
  });
});

describe('backup: start, progress, completion', () => {
  test('the target is hotplugged first; once attached, Start is sent and backupStatus recorded; Initiated, Full', async () => {
    // arrange
    await runningVm('flow-vm');
    await targetPvc('flow-target');
    const created = await kube.create(VM_BACKUPS, backupManifest('flow', vmSource('flow-vm')));
    // act
    const first = await run('flow');
    // assert: finalizer and utility volume, no command yet
    assert.equal(first, 'done');
    assert.deepEqual(actions(), ['patch virtualmachinebackups flow', 'patch virtualmachineinstances flow-vm', 'update virtualmachinebackups/status flow']);
    assert.deepEqual((await getVmi('flow-vm')).spec.utilityVolumes, [{ name: 'flow-backup-target-pvc', claimName: 'flow-target', type: 'Backup' }]);
    assert.deepEqual(calls, []);
    // arrange: virt-handler attaches it
    await attach('flow-vm', 'flow-backup-target-pvc');
    // act
    await run('flow');
    // assert
    assert.deepEqual(calls, [
      { verb: 'backup', name: 'flow-vm', body: { backupName: 'flow', cmd: 'Start', mode: 'Push', backupStartTime: created.metadata?.creationTimestamp, skipQuiesce: false, targetPath: '/var/run/kubevirt/hotplug-disks/flow-backup-target-pvc' } },
    ]);
    assert.deepEqual((await getVmi('flow-vm')).status?.changedBlockTracking?.backupStatus, { backupName: 'flow', startTimestamp: created.metadata?.creationTimestamp });
    const b = await getBackup('flow');
    assert.deepEqual(conds(b), ['Progressing=True Initiated: Backup is in progress']);
    assert.equal(b.status?.type, 'Full');
  });

  test('progress: included volumes, checkpoint and Quiesced; completion waits for the detach, then Complete and the event', async () => {
    // arrange
    await started('prog', 'prog-vm');
    await progress('prog-vm', { volumes: [{ volumeName: 'disk' }], checkpointName: 'prog', quiesceStatus: 'Succeeded' });
    // act
    await run('prog');
    // assert
    let b = await getBackup('prog');
    assert.deepEqual(b.status?.includedVolumes, [{ volumeName: 'disk' }]);
    assert.equal(b.status?.checkpointName, 'prog');
    assert.deepEqual(conds(b), ['Progressing=True Initiated: Backup is in progress', 'Quiesced=True QuiesceSucceeded: Guest filesystem was successfully quiesced']);
    // arrange: virt-handler completes it
    await progress('prog-vm', { completed: true });
    // act
    const pending = await run('prog');
    // assert: the utility volume leaves the spec, the pass ends "cleanup pending" (the status written anyway)
    assert.equal(pending, 'error: cleanup pending');
    assert.equal((await getVmi('prog-vm')).spec.utilityVolumes, undefined);
    // arrange: virt-handler detaches it
    await patchVmi('prog-vm', { status: { volumeStatus: [] } });
    // act
    const last = await run('prog');
    // assert
    assert.equal(last, 'done');
    assert.equal((await getVmi('prog-vm')).status?.changedBlockTracking?.backupStatus, undefined, 'backupStatus cleared');
    b = await getBackup('prog');
    assert.deepEqual(conds(b), ['Progressing=False Completed: Successfully completed VirtualMachineBackup', 'Quiesced=True QuiesceSucceeded: Guest filesystem was successfully quiesced', 'Complete=True Completed: Successfully completed VirtualMachineBackup']);
    assert.equal(b.status?.checkpointName, 'prog', 'kept from the progress (no tracker to take it)');
    assert.deepEqual(events(), ['Normal VirtualMachineBackupCompletedSuccessfully: Successfully completed VirtualMachineBackup']);
    // act: a terminal backup is left alone
    server.audit.clear();
    await run('prog');
    // assert
    assert.deepEqual(actions(), []);
  });

  test('a tracker: the checkpoint recorded on it; the next backup through it is Incremental from that checkpoint (unless forced full)', async () => {
    // arrange
    await kube.create(VM_BACKUP_TRACKERS, { apiVersion: 'backup.kubevirt.io/v1alpha1', kind: 'VirtualMachineBackupTracker', metadata: { name: 'trk', namespace: NS }, spec: { source: vmSource('trk-vm') } });
    await started('trk-1', 'trk-vm', {}, trackerSource('trk'));
    await progress('trk-vm', { volumes: [{ volumeName: 'disk' }], checkpointName: 'cp-1', quiesceStatus: 'Skipped', completed: true });
    await run('trk-1');
    await patchVmi('trk-vm', { status: { volumeStatus: [] } });
    await run('trk-1');
    // assert
    const tracker = (await kube.get(VM_BACKUP_TRACKERS, NS, 'trk'))! as VirtualMachineBackupTracker;
    const startTs = (await getBackup('trk-1')).metadata?.creationTimestamp;
    assert.deepEqual(tracker.status?.latestCheckpoint, { name: 'cp-1', creationTime: startTs, volumes: [{ volumeName: 'disk' }] });
    assert.equal((await getBackup('trk-1')).status?.checkpointName, 'cp-1');
    // act: two more backups through the tracker, one forced full
    for (const [name, force] of [['trk-2', false], ['trk-3', true]] as const) {
      calls = [];
      await targetPvc(`${name}-target`);
      await kube.create(VM_BACKUPS, backupManifest(name, trackerSource('trk'), force ? { forceFullBackup: true } : {}));
      await run(name);
      await attach('trk-vm', `${name}-backup-target-pvc`);
      await run(name);
      // assert
      assert.equal(calls[0]?.body.incremental, force ? undefined : 'cp-1', name);
      assert.equal((await getBackup(name)).status?.type, force ? 'Full' : 'Incremental');
      // and the next one: virt-handler ends this one, the controller cleans up
      await progress('trk-vm', { completed: true, failed: true, backupMsg: 'stopped by the test' });
      await run(name);
      await patchVmi('trk-vm', { status: { volumeStatus: [] } });
      await run(name);
      assert.deepEqual(conds(await getBackup(name)).filter((c) => c.startsWith('Failed')), ['Failed=True Failed: Backup has failed: stopped by the test']);
    }
  });

  // The chaos suite's backup scenario, seed 3 (docs/reliability.md): a pass that died after
  // clearing backupStatus and before writing Complete left the next pass to fail it SourceLost.
  const dying = [
    { name: 'dies writing the outcome', at: 'the backup status write', id: 'die-status', dies: (method: string, args: readonly unknown[]) => args[0] === VM_BACKUPS && (method === 'update' || method === 'patch') },
    { name: 'dies clearing backupStatus', at: 'the VMI patch removing backupStatus', id: 'die-clear', dies: (method: string, args: readonly unknown[]) => args[0] === VMIS && method === 'patch' && JSON.stringify(args[3]).includes('"remove"') && JSON.stringify(args[3]).includes('backupStatus') },
  ];
  for (const c of dying) {
    test(`a completing pass that ${c.name}: the next pass ends it Complete, backupStatus cleared (chaos seed 3)`, async () => {
      // arrange: completed by virt-handler, the utility volume already detached
      await started(c.id, `${c.id}-vm`);
      await progress(`${c.id}-vm`, { volumes: [{ volumeName: 'disk' }], checkpointName: c.id, quiesceStatus: 'Succeeded', completed: true });
      await run(c.id);
      await patchVmi(`${c.id}-vm`, { status: { volumeStatus: [] } });
      let died = 0;
      const healthy = deps.kube;
      deps = { ...deps, kube: decorateKubeClient(healthy as KubeClient, (method, args, call) => (died === 0 && c.dies(method, args) ? Promise.reject(new WorkerCrash(`worker killed before ${c.at}`)).finally(() => died++) : call())) };
      // act: the pass dies; a fresh one (another worker) runs the key again
      const dead = await run(c.id);
      deps = { ...deps, kube: healthy };
      const next = await run(c.id);
      // assert
      assert.equal(died, 1, `the pass reached ${c.at}`);
      assert.match(dead, /worker killed/);
      assert.equal(next, 'done');
      assert.deepEqual(conds(await getBackup(c.id)).filter((x) => !x.startsWith('Quiesced')), ['Progressing=False Completed: Successfully completed VirtualMachineBackup', 'Complete=True Completed: Successfully completed VirtualMachineBackup'], 'Complete, not SourceLost');
      assert.equal((await getVmi(`${c.id}-vm`)).status?.changedBlockTracking?.backupStatus, undefined, 'backupStatus cleared');
    });
  }

  test('a completion message is a warning; the VMI leaving Running fails it SourceUnhealthy', async () => {
    // arrange
    await started('warn', 'warn-vm');
    await progress('warn-vm', { volumes: [{ volumeName: 'disk' }], completed: true, backupMsg: 'unfreeze failed' });
    await patchVmi('warn-vm', { spec: { utilityVolumes: null }, status: { volumeStatus: [] } });
    await started('unhealthy', 'unhealthy-vm');
    await patchVmi('unhealthy-vm', { spec: { utilityVolumes: null }, status: { phase: 'Failed', volumeStatus: [] } });
    // act
    await run('warn');
    await run('unhealthy');
    // assert
    assert.deepEqual(conds(await getBackup('warn')), ['Progressing=False CompletedWithWarning: Completed VirtualMachineBackup, warning: unfreeze failed', 'Complete=True CompletedWithWarning: Completed VirtualMachineBackup, warning: unfreeze failed']);
    assert.deepEqual(conds(await getBackup('unhealthy')), ['Progressing=False SourceUnhealthy: Backup has failed: VMI is not in a running state: Failed', 'Failed=True SourceUnhealthy: Backup has failed: VMI is not in a running state: Failed']);
    assert.deepEqual(events(), ['Warning VirtualMachineBackupCompletedWithWarning: Completed VirtualMachineBackup, warning: unfreeze failed', 'Warning VirtualMachineBackupFailed: VMI is not in a running state: Failed']);
  });

  test('Start refused: the error names it; another backup running on the VMI is refused before any command', async () => {
    // arrange
    await runningVm('refused-vm');
    await targetPvc('refused-target');
    await kube.create(VM_BACKUPS, backupManifest('refused', vmSource('refused-vm')));
    await run('refused');
    await attach('refused-vm', 'refused-backup-target-pvc');
    refuse = { code: 500, message: 'VMI is paused' };
    // act / assert
    assert.equal(await run('refused'), 'error: failed to send Start backup command: VMI is paused');
    // arrange
    refuse = undefined;
    calls = [];
    await progress('refused-vm', { backupName: 'someone-else' });
    // act / assert
    assert.equal(await run('refused'), 'error: another backup someone-else is already in progress, cannot start backup refused');
    assert.deepEqual(calls, []);
  });
});

describe('backup deleted', () => {
  test('while running: Abort, Aborting (one event), then Failed, then the finalizer goes and so does the backup', async () => {
    // arrange
    await started('abort', 'abort-vm');
    calls = [];
    await kube.delete(VM_BACKUPS, NS, 'abort');
    // act
    await run('abort');
    await run('abort');
    // assert
    assert.deepEqual(calls.map((c) => `${c.verb} ${String(c.body.cmd)}`), ['backup Abort', 'backup Abort']);
    assert.deepEqual(conds(await getBackup('abort')), ['Progressing=True Aborting: Backup is aborting']);
    assert.deepEqual(events(), ['Warning VirtualMachineBackupAborting: Backup is aborting'], 'only on the transition into Aborting');
    // arrange: virt-handler ends it failed, detaches the target
    await progress('abort-vm', { completed: true, failed: true, backupMsg: 'backup was aborted' });
    await run('abort');
    await patchVmi('abort-vm', { status: { volumeStatus: [] } });
    // act
    await run('abort');
    const failed = await getBackup('abort');
    await run('abort');
    // assert
    assert.deepEqual(conds(failed), ['Progressing=False Failed: Backup has failed: backup was aborted', 'Failed=True Failed: Backup has failed: backup was aborted']);
    assert.equal(await kube.get(VM_BACKUPS, NS, 'abort'), undefined, 'the finalizer removed: gone');
    assert.equal((await getVmi('abort-vm')).status?.changedBlockTracking?.backupStatus, undefined);
  });

  test('before it started: without a VMI the finalizer just goes; with one, DeletedDuringInit', async () => {
    // arrange
    await runningVm('init-vm');
    await targetPvc('init-target');
    await kube.create(VM_BACKUPS, backupManifest('init', vmSource('init-vm')));
    await run('init'); // finalizer, utility volume
    await kube.delete(VM_BACKUPS, NS, 'init');
    // act
    const pending = await run('init');
    await patchVmi('init-vm', { status: { volumeStatus: [] } });
    await run('init');
    const failed = await getBackup('init');
    await run('init');
    // assert
    assert.equal(pending, 'error: cleanup pending');
    assert.deepEqual(conds(failed).filter((c) => c.startsWith('Failed')), ['Failed=True DeletedDuringInit: Backup has failed: backup was deleted during initialization']);
    assert.equal(await kube.get(VM_BACKUPS, NS, 'init'), undefined);
  });
});

describe('tracker checkpoint redefinition', () => {
  for (const c of [
    { name: 'accepted: the flag goes', refuse: undefined, want: { latestCheckpoint: { name: 'cp-r' } }, event: [] as string[] },
    { name: 'refused 422: flag and checkpoint go, with a Warning', refuse: { code: 422, message: 'Unprocessable Entity: checkpoint cp-r not found' }, want: {}, event: ['Warning CheckpointRedefinitionFailed: Failed to redefine checkpoint cp-r: Unprocessable Entity: checkpoint cp-r not found. Checkpoint cleared, next backup will be full.'] },
  ]) {
    test(c.name, async () => {
      // arrange
      const t = c.refuse ? 'redef-no' : 'redef-ok';
      await runningVm(`${t}-vm`);
      await kube.create(VM_BACKUP_TRACKERS, { apiVersion: 'backup.kubevirt.io/v1alpha1', kind: 'VirtualMachineBackupTracker', metadata: { name: t, namespace: NS }, spec: { source: vmSource(`${t}-vm`) } });
      await kube.patch(VM_BACKUP_TRACKERS, NS, t, { type: 'merge', body: { status: { checkpointRedefinitionRequired: true, latestCheckpoint: { name: 'cp-r' } } } }, { subresource: 'status' });
      refuse = c.refuse;
      // act
      const out = await run(t);
      // assert
      assert.equal(out, 'done');
      assert.deepEqual(calls, [{ verb: 'redefine-checkpoint', name: `${t}-vm`, body: { name: 'cp-r' } }]);
      assert.deepEqual(((await kube.get(VM_BACKUP_TRACKERS, NS, t)) as VirtualMachineBackupTracker).status, c.want);
      assert.deepEqual(events(), c.event);
    });
  }
});
