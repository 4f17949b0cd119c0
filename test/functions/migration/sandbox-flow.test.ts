/**
 * A migration of a running VMI, end to end through the relay, the embedded queue, the vmi and
 * migration functions and the simulated nodes: target pod (anti-affinity to the source) →
 * hand-off → virt-handler migrates → the VMI runs on another node; and a VMI deleted mid-migration.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CoreV1Api, CustomObjectsApi, setHeaderOptions } from '@kubernetes/client-node';
import { CREATED_BY_LABEL, MIGRATION_FINALIZER, MIGRATION_JOB_UID_LABEL } from '../../../shared/api/well-known.ts';
import { CLUSTER_COUNTER } from '../../../functions/migration/limits.ts';
import { finalMigration, MIGRATION_IDENTITY, migrationManifest, NS, runningVmis, startCluster, vmiManifest, waitFor, type Cluster } from './support.ts';
import { MIGRATIONS, NODES, PODS, RESOURCE_QUOTAS, VMIS } from '../../../shared/api/resources.ts';
import { REAL } from '../../support/lanes.ts';

let c: Cluster;

before(async () => {
  c = await startCluster({ nodes: 3, speed: 20 });
});
after(async () => {
  await c.stop();
});

// First in the file: the policy source caches for 5 s (wall clock), and nothing has read it yet.
test('a MigrationPolicy matching the VMI and its namespace is applied at hand-off; the target pod has the source node\'s host-model CPU selectors', async () => {
  // arrange: a policy for VMIs labelled policy=gold in namespaces labelled tier=gold
  const admin = c.sandbox.apiServer.kubeConfig();
  await admin.makeApiClient(CoreV1Api).patchNamespace({ name: NS, body: { metadata: { labels: { tier: 'gold' } } } }, setHeaderOptions('Content-Type', 'application/merge-patch+json'));
  await admin.makeApiClient(CustomObjectsApi).createClusterCustomObject({
    group: 'migrations.kubevirt.io', version: 'v1alpha1', plural: 'migrationpolicies',
    body: { apiVersion: 'migrations.kubevirt.io/v1alpha1', kind: 'MigrationPolicy', metadata: { name: 'gold' }, spec: { allowAutoConverge: true, completionTimeoutPerGiB: 123, selectors: { namespaceSelector: { tier: 'gold' }, virtualMachineInstanceSelector: { policy: 'gold' } } } },
  });
  const nodes = await runningVmis(c, [vmiManifest('mig-p', { labels: { policy: 'gold' }, cpuModel: 'host-model' })]);
  const sourceNode = await c.kube.get(NODES, undefined, nodes.get('mig-p') ?? '');
  // act
  const created = await c.kube.create(MIGRATIONS, migrationManifest('mig-p-1', 'mig-p'));
  const done = await finalMigration(c, 'mig-p-1');
  // assert
  assert.equal(done.status?.phase, 'Succeeded');
  const state = done.status?.migrationState;
  assert.equal(state?.migrationPolicyName, 'gold', 'the policy was matched on the VMI\'s and the namespace\'s labels');
  assert.equal(state?.migrationConfiguration?.allowAutoConverge, true);
  assert.equal(state?.migrationConfiguration?.completionTimeoutPerGiB, 123);
  const target = c.sandbox.apiServer.audit.query({ resource: 'pods', verb: 'create', identity: MIGRATION_IDENTITY })
    .find((e) => (e.object.metadata.labels as Record<string, string> | undefined)?.[MIGRATION_JOB_UID_LABEL] === created.metadata?.uid);
  const selector = (target?.object.spec as { nodeSelector?: Record<string, string> } | undefined)?.nodeSelector ?? {};
  const model = Object.keys(sourceNode?.metadata?.labels ?? {}).find((k) => k.startsWith('host-model-cpu.node.kubevirt.io/'))?.split('/')[1];
  assert.ok(model, 'the sandbox node reports a host model');
  assert.equal(selector[`cpu-model-migration.node.kubevirt.io/${model}`], 'true', `target pod selectors: ${JSON.stringify(selector)}`);
  assert.equal(selector['cpu-vendor.node.kubevirt.io/Intel'], 'true');
});

test('a migration of a Running VMI completes: target pod with anti-affinity, hand-off, the VMI moves node', async () => {
  // arrange
  const nodes = await runningVmis(c, [vmiManifest('mig-a')]);
  const source = nodes.get('mig-a');
  const vmi = await c.kube.get(VMIS, NS, 'mig-a');
  const callsBefore = c.calls.apiCalls.get('migration') ?? 0;
  // act
  const created = await c.kube.create(MIGRATIONS, migrationManifest('mig-a-1', 'mig-a'));
  const done = await finalMigration(c, 'mig-a-1');
  // assert
  assert.equal(done.status?.phase, 'Succeeded', `phases: ${JSON.stringify(done.status?.phaseTransitionTimestamps?.map((p) => p.phase))}`);
  const phases = done.status?.phaseTransitionTimestamps?.map((p) => p.phase) ?? [];
  assert.deepEqual(phases, ['Pending', 'Scheduling', 'Scheduled', 'PreparingTarget', 'TargetReady', 'Running', 'Succeeded'].filter((p) => phases.includes(p)), 'phases in KubeVirt order');
  assert.ok(phases.includes('Pending') && phases.at(-1) === 'Succeeded');
  const moved = await waitFor('VMI on the target node', async () => {
    const v = await c.kube.get(VMIS, NS, 'mig-a');
    return v?.status?.nodeName && v.status.nodeName !== source ? v : undefined;
  });
  assert.equal(moved.status?.migrationState?.migrationUid, created.metadata?.uid, 'the VMI carries this migration');
  assert.equal(moved.status?.migrationState?.completed, true);
  const targetCreate = c.sandbox.apiServer.audit.query({ resource: 'pods', verb: 'create', identity: MIGRATION_IDENTITY })
    .find((e) => (e.object.metadata.labels as Record<string, string> | undefined)?.[MIGRATION_JOB_UID_LABEL] === created.metadata?.uid);
  assert.ok(targetCreate, 'the migration function created a target pod labelled with the migration UID');
  const targetPod = (await c.kube.list(PODS, NS, { labelSelector: `${MIGRATION_JOB_UID_LABEL}=${created.metadata?.uid ?? ''}` })).items[0];
  assert.match(targetPod?.metadata?.annotations?.['kubevirt.io/migration-target-ready-timestamp'] ?? '', /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)? \+0000 UTC$/,
    'the target pod was told when its domain was ready, in Go\'s time format');
  const spec = targetCreate.object.spec as { affinity?: { podAntiAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { labelSelector?: { matchLabels?: Record<string, string> }; topologyKey?: string }[] } } };
  const terms = spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
  assert.ok(terms.some((t) => t.labelSelector?.matchLabels?.[CREATED_BY_LABEL] === vmi?.metadata?.uid && t.topologyKey === 'kubernetes.io/hostname'), `anti-affinity to the VMI's pods: ${JSON.stringify(terms)}`);
  assert.equal(done.status?.migrationState?.sourceNode, source, 'the final migration state names the source node');
  // The finalizer goes in the write after the final phase (leases are released in between).
  await waitFor('the finalizer gone once final', async () => ((await c.kube.get(MIGRATIONS, NS, 'mig-a-1'))?.metadata?.finalizers?.includes(MIGRATION_FINALIZER) ? undefined : true));
  assert.deepEqual(await c.runtime.state.leases.holders(CLUSTER_COUNTER, c.sandbox.clock.nowMs()), [], 'no lease left behind');
  const events = c.sandbox.apiServer.audit.query({ resource: 'events', identity: MIGRATION_IDENTITY }).map((e) => (e.object as { reason?: string }).reason);
  for (const r of ['SuccessfulCreate', 'SuccessfulHandOver', 'SuccessfulMigration']) assert.ok(events.includes(r), `event ${r} recorded`);
  process.stdout.write(`# API calls by migration reconciles for one migration: ${(c.calls.apiCalls.get('migration') ?? 0) - callsBefore}\n`);
});

test('a VMI deleted mid-migration: target pod gone, migration failed and deleted, leases released', async () => {
  // arrange
  await runningVmis(c, [vmiManifest('mig-b')]);
  const created = await c.kube.create(MIGRATIONS, migrationManifest('mig-b-1', 'mig-b'));
  await waitFor('target pod created', async () => {
    const pods = await c.kube.list(PODS, NS, { labelSelector: `${MIGRATION_JOB_UID_LABEL}=${created.metadata?.uid ?? ''}` });
    return pods.items[0];
  });
  // act
  await c.kube.delete(VMIS, NS, 'mig-b');
  // assert
  await waitFor('VMI gone', async () => ((await c.kube.get(VMIS, NS, 'mig-b')) ? undefined : true));
  await waitFor('migration deleted', async () => ((await c.kube.get(MIGRATIONS, NS, 'mig-b-1')) ? undefined : true));
  const left = await waitFor('pods gone', async () => {
    const pods = await c.kube.list(PODS, NS, { labelSelector: `${MIGRATION_JOB_UID_LABEL}=${created.metadata?.uid ?? ''}` });
    return pods.items.length === 0 ? pods.items : undefined;
  });
  assert.deepEqual(left, []);
  const statuses = c.sandbox.apiServer.audit.query({ resource: 'virtualmachineinstancemigrations', name: 'mig-b-1' }).map((e) => (e.object.status as { phase?: string } | undefined)?.phase);
  assert.ok(statuses.includes('Failed'), `the migration was recorded Failed before it went: ${statuses.join(',')}`);
  assert.deepEqual(await c.runtime.state.leases.holders(CLUSTER_COUNTER, c.sandbox.clock.nowMs()), [], 'no lease left behind');
});

test('a target pod refused by a ResourceQuota: migrationRejectedByResourceQuota on the migration; the quota raised, it goes on and succeeds', { skip: REAL ? false : 'the emulator checks no quota usage (kube-apiserver\'s "exceeded quota" is the real lane\'s)' }, async () => {
  // arrange: a quota of exactly the namespace's live pods
  await runningVmis(c, [vmiManifest('mig-q')]);
  const live = (await c.kube.list(PODS, NS)).items.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed').length;
  await c.kube.create(RESOURCE_QUOTAS, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'mig-quota', namespace: NS }, spec: { hard: { pods: String(live) } } });
  await waitFor('the quota controller\'s first count', async () => ((await c.kube.get(RESOURCE_QUOTAS, NS, 'mig-quota'))?.status?.hard ? true : undefined));
  try {
    // act
    await c.kube.create(MIGRATIONS, migrationManifest('mig-q-1', 'mig-q'));
    // assert
    await waitFor('migrationRejectedByResourceQuota', async () => ((await c.kube.get(MIGRATIONS, NS, 'mig-q-1'))?.status?.conditions?.some((x) => x.type === 'migrationRejectedByResourceQuota' && x.status === 'True') ? true : undefined));
    assert.equal((await c.kube.get(MIGRATIONS, NS, 'mig-q-1'))?.status?.phase, 'Pending');
    // act: room for one more pod (the relay wakes the migration on the quota's change)
    await c.kube.patch(RESOURCE_QUOTAS, NS, 'mig-quota', { type: 'merge', body: { spec: { hard: { pods: String(live + 1) } } } });
    // assert
    const done = await finalMigration(c, 'mig-q-1');
    assert.equal(done.status?.phase, 'Succeeded');
    assert.equal(done.status?.conditions?.find((x) => x.type === 'migrationRejectedByResourceQuota'), undefined, 'the condition went once past Pending');
  } finally {
    await c.kube.delete(RESOURCE_QUOTAS, NS, 'mig-quota');
  }
});
