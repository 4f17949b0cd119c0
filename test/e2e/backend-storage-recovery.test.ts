/**
 * An interrupted migration of backend storage, end to end (issue 16, reference-vm-vmi-depth §2
 * "Interrupted migration", KubeVirt's `RecoverFromBrokenMigration`): a VM with a persistent TPM on
 * a ReadWriteOnce claim migrates, and its target pod disappears mid-migration. The migration
 * controller runs the `recover-<migration>` Job (the launcher image, `ls /meta/migrated || exit
 * 42` on the source claim's `meta`); the simulated kubelet runs its pod against the marker the
 * sandbox keeps per claim (a source launcher writes it when its domain has left). On the emulator
 * the sandbox's Job controller makes the pod and reads its end, on the real control plane
 * kube-controller-manager's does.
 * - The transfer had finished (the marker is there): the Job completes, the target claim is
 *   handed over to the VMI, the source deleted, the migration Succeeded.
 * - It had not (no marker): exit 42, the pod failure policy fails the Job (`PodFailurePolicy`), the
 *   target claim is deleted, the migration Failed, the source claim stays the VMI's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { V1Job, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { EVENTS, JOBS, MIGRATIONS, PODS, PVCS, VMIS, VMS } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { NS, startSlice, until, vmManifest, type Slice } from './support.ts';

let slice: Slice;
let kube: KubeClient;
let problems: string[] = [];

before(async () => {
  // A transfer long enough (simulated ms at speed 1) for the test to pull the target pod out from under it.
  slice = await startSlice({ storage: { provisionMs: 100 }, timings: { migration: { prepareMs: 200, transferMs: 4000 } } });
  ({ kube, problems } = slice);
});
after(async () => {
  await slice?.stop();
});

async function runningTpmVm(name: string): Promise<V1PersistentVolumeClaim> {
  const vm = vmManifest(name, { runStrategy: 'Always' });
  vm.spec.template.spec!.domain.devices.tpm = { persistent: true } as never;
  await kube.create(VMS, vm);
  await until(`${name} Running`, async () => (await kube.get(VMIS, NS, name))?.status?.phase === 'Running', { tries: 3000, problems });
  const [source] = (await kube.list(PVCS, NS, { labelSelector: `persistent-state-for=${name}` })).items;
  assert.equal(source?.status?.accessModes?.[0], 'ReadWriteOnce', 'not shared: the migration makes a claim of its own');
  return source!;
}

async function startMigration(name: string, vmi: string): Promise<void> {
  await kube.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name, namespace: NS }, spec: { vmiName: vmi } });
}

const phaseOf = async (name: string) => (await kube.get(MIGRATIONS, NS, name))?.status?.phase;
const migrationEvents = async (name: string): Promise<string[]> => {
  const uid = (await kube.get(MIGRATIONS, NS, name))?.metadata?.uid;
  const events = (await kube.list(EVENTS, NS)).items as { involvedObject?: { uid?: string }; type?: string; reason?: string; message?: string }[];
  return events.filter((e) => e.involvedObject?.uid === uid).map((e) => `${e.type} ${e.reason}: ${e.message}`);
};

/** The recovery Job as it was while it ran (it is deleted 30 s after it finished). */
async function recoveryJob(migration: string): Promise<V1Job> {
  let job: V1Job | undefined;
  await until(`job recover-${migration}`, async () => (job = await kube.get(JOBS, NS, `recover-${migration}`)) !== undefined, { tries: 3000, problems });
  return job!;
}

/** Each pod of the Job: its phase and its container's exit code. */
async function jobPodExits(job: string): Promise<[string | undefined, number | undefined][]> {
  const pods = (await kube.list(PODS, NS, { labelSelector: `batch.kubernetes.io/job-name=${job}` })).items;
  return pods.map((p) => [p.status?.phase, p.status?.containerStatuses?.[0]?.state?.terminated?.exitCode]);
}

function assertJobShape(job: V1Job, migrationUid: string | undefined, sourceClaim: string): void {
  assert.deepEqual(job.metadata?.ownerReferences?.map((r) => [r.kind, r.uid, r.controller]), [['VirtualMachineInstanceMigration', migrationUid, true]]);
  assert.deepEqual([job.spec?.activeDeadlineSeconds, job.spec?.backoffLimit, job.spec?.ttlSecondsAfterFinished], [30, 0, 30]);
  assert.deepEqual(JSON.parse(JSON.stringify(job.spec?.podFailurePolicy?.rules?.[0])), { action: 'FailJob', onExitCodes: { containerName: 'container', operator: 'In', values: [42] } });
  const c = job.spec?.template.spec?.containers[0];
  assert.deepEqual([c?.command, c?.args], [['bash'], ['-c', 'ls /meta/migrated || exit 42']]);
  assert.match(c?.image ?? '', /virt-launcher/, 'the launcher image');
  assert.deepEqual(c?.volumeMounts?.map((m) => [m.mountPath, m.subPath]), [['/meta', 'meta']]);
  assert.equal(job.spec?.template.spec?.volumes?.[0]?.persistentVolumeClaim?.claimName, sourceClaim, 'the source claim');
}

describe('a backend-storage migration whose target pod disappears', () => {
  test('the transfer had finished: the recovery Job finds the marker, the target claim prevails, Succeeded', async () => {
    // arrange
    const source = await runningTpmVm('rec-ok');
    slice.sandbox.virtHandler.loseTargetAfterTransfer(NS, 'rec-ok');
    // act
    await startMigration('rec-ok-mig', 'rec-ok');
    // assert: the Job, shaped as KubeVirt builds it, completes
    const job = await recoveryJob('rec-ok-mig');
    const migration = (await kube.get(MIGRATIONS, NS, 'rec-ok-mig'))!;
    assertJobShape(job, migration.metadata?.uid, source.metadata?.name ?? '');
    await until('the migration Succeeded', async () => (await phaseOf('rec-ok-mig')) === 'Succeeded', { tries: 3000, problems });
    // (the Job and its pod are deleted 30 s after the Job finished: long after this)
    const done = await kube.get(JOBS, NS, 'recover-rec-ok-mig');
    assert.ok(done?.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True'), `the Job completed: ${JSON.stringify(done?.status)}`);
    assert.deepEqual(await jobPodExits('recover-rec-ok-mig'), [['Succeeded', 0]], 'its pod found the marker');
    const targetName = (await kube.get(MIGRATIONS, NS, 'rec-ok-mig'))?.status?.migrationState?.targetPersistentStatePVCName ?? '';
    const target = await kube.get(PVCS, NS, targetName);
    assert.equal(target?.metadata?.labels?.['persistent-state-for'], 'rec-ok', 'the target claim handed over to the VMI');
    assert.equal(target?.metadata?.labels?.['kubevirt.io/migrationName'], undefined);
    const left = await kube.get(PVCS, NS, source.metadata?.name ?? '');
    assert.ok(left === undefined || left.metadata?.deletionTimestamp, 'the source claim deleted');
    // KubeVirt records the interruption whatever the Job found.
    assert.ok((await migrationEvents('rec-ok-mig')).includes('Warning FailedMigration: Migration target pod was removed during active migration.'));
  });

  test('the transfer had not finished: exit 42 fails the Job by its pod failure policy, the source claim prevails, Failed', async () => {
    // arrange
    const source = await runningTpmVm('rec-no');
    await startMigration('rec-no-mig', 'rec-no');
    await until('the migration Running', async () => (await phaseOf('rec-no-mig')) === 'Running', { tries: 3000, problems });
    const targetName = (await kube.get(MIGRATIONS, NS, 'rec-no-mig'))?.status?.migrationState?.targetPersistentStatePVCName ?? '';
    const targetPod = (await kube.get(VMIS, NS, 'rec-no'))?.status?.migrationState?.targetPod ?? '';
    // act: the target pod vanishes in the middle of the transfer
    await kube.delete(PODS, NS, targetPod, { gracePeriodSeconds: 0 });
    // assert
    const job = await recoveryJob('rec-no-mig');
    assertJobShape(job, (await kube.get(MIGRATIONS, NS, 'rec-no-mig'))?.metadata?.uid, source.metadata?.name ?? '');
    await until('the migration Failed', async () => (await phaseOf('rec-no-mig')) === 'Failed', { tries: 3000, problems });
    const failed = await kube.get(JOBS, NS, 'recover-rec-no-mig');
    assert.ok(failed?.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True' && c.reason === 'PodFailurePolicy'), `failed by the pod failure policy: ${JSON.stringify(failed?.status)}`);
    assert.deepEqual(await jobPodExits('recover-rec-no-mig'), [['Failed', 42]], 'its pod found no marker');
    await until('the target claim deleted', async () => {
      const t = await kube.get(PVCS, NS, targetName);
      return t === undefined || t.metadata?.deletionTimestamp !== undefined;
    }, { tries: 3000, problems });
    const kept = await kube.get(PVCS, NS, source.metadata?.name ?? '');
    assert.equal(kept?.metadata?.deletionTimestamp, undefined, 'the source claim kept');
    assert.equal(kept?.metadata?.labels?.['persistent-state-for'], 'rec-no');
    assert.ok((await migrationEvents('rec-no-mig')).includes('Warning FailedMigration: Migration target pod was removed during active migration.'));
  });
});
