/**
 * The {@link KubeClient} contract: the same tests for every implementation, against the sandbox
 * API server (real HTTP). Each implementation's test file calls {@link kubeClientContract} with a
 * factory, as test/queue/conformance.ts does for the queues.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { startApiServer, type ApiServer } from '../../sandbox/apiserver/index.ts';
import { ApiError } from '../../sandbox/apiserver/errors.ts';
import type { DataVolume, KubeVirt, MigrationPolicy, VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceMigration, VirtualMachineInstanceReplicaSet, VirtualMachinePool } from '../../shared/api/index.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import { ApiCallCounter, countingKubeClient } from '../../shared/kube/call-counter.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { AlreadyExistsError, KubeInvalidError, KubeRequestError, KubeTransientError, NotFoundError } from '../../shared/kube/errors.ts';
import type { KubeClientOptions } from '../../shared/kube/requests.ts';
import { projectRoot } from '../support/reference.ts';
import { kubeClientWireContract } from './client-wire-contract.ts';
import { CONTROLLER_REVISIONS, DATA_VOLUMES, KUBEVIRTS, MIGRATIONS, MIGRATION_POLICIES, NAMESPACES, NODES, PODS, PVCS, VM_POOLS, VMI_REPLICA_SETS, VMIS, VMS } from '../../shared/api/resources.ts';

/** Builds a client for `server`, authenticating as `identity` (the sandbox counts requests by it). */
export type KubeClientFactory = (server: Pick<ApiServer, 'url' | 'kubeConfig'>, identity: string, options: KubeClientOptions) => KubeClient;

const NS = 'default';
const NOW = new Date('2026-03-01T12:00:00Z');
const fixtureVmi = parse(readFileSync(join(projectRoot, 'test/api/fixtures/vmi-minimal.yaml'), 'utf8')) as VirtualMachineInstance;

function vmi(name: string): VirtualMachineInstance {
  return { ...structuredClone(fixtureVmi), metadata: { name, namespace: NS } };
}

function launcherPod(owner: VirtualMachineInstance): V1Pod {
  return {
    metadata: {
      namespace: NS,
      generateName: `virt-launcher-${owner.metadata?.name}-`,
      labels: { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': owner.metadata?.uid ?? '' },
      ownerReferences: [
        { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: owner.metadata?.name ?? '', uid: owner.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: { containers: [{ name: 'compute', image: 'virt-launcher' }] },
  };
}

/** The error a promise rejects with; fails the test when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('expected the call to fail');
}

/** Registers the contract tests for one implementation. */
export function kubeClientContract(name: string, make: KubeClientFactory): void {
  describe(`KubeClient contract: ${name}`, () => {
    let server: ApiServer;
    let kube: KubeClient;

    before(async () => {
      // A short wait before 504 for a resourceVersion the server has not reached (real: ~3 s).
      server = await startApiServer({ port: 0, tooLargeWaitMs: 50 });
      kube = make(server, 'reconciler', { now: () => NOW, reportingInstance: 'test-1' });
    });
    after(() => server.close());

    kubeClientWireContract(make);

    describe('custom resources through the facade', () => {
      test('create, get, and a missing object reads as undefined', async () => {
        // act
        const created = await kube.create(VMIS, vmi('vmi-a'));
        const read = await kube.get(VMIS, NS, 'vmi-a', { resourceVersion: created.metadata?.resourceVersion });
        const missing = await kube.get(VMIS, NS, 'nope');
        // assert
        assert.ok(created.metadata?.uid, 'the server assigns a uid');
        assert.equal(read?.metadata?.uid, created.metadata?.uid);
        assert.equal(read?.spec.domain.devices.disks?.[0]?.name, 'containerdisk');
        assert.equal(missing, undefined);
      });

      test('creating the same name twice is AlreadyExists', async () => {
        const err = await rejection(kube.create(VMIS, vmi('vmi-a')));
        assert.ok(err instanceof AlreadyExistsError, String(err));
        assert.equal(err.reason, 'AlreadyExists');
      });

      test('a VMI has no /status subresource (as in KubeVirt): a merge patch sets status on the object', async () => {
        // act
        const patched = await kube.patch(VMIS, NS, 'vmi-a', { type: 'merge', body: { status: { phase: 'Pending' } } });
        const err = await rejection(kube.patch(VMIS, NS, 'vmi-a', { type: 'merge', body: { status: { phase: 'Pending' } } }, { subresource: 'status' }));
        // assert
        assert.equal(patched.status?.phase, 'Pending');
        assert.ok(err instanceof Error, 'virtualmachineinstances/status does not exist');
      });

      test('a JSON patch applies when its test holds, and a failed test is a retryable Conflict', async () => {
        // act
        const ok = await kube.patch(VMIS, NS, 'vmi-a', { type: 'json', ops: [
          { op: 'test', path: '/status/phase', value: 'Pending' },
          { op: 'replace', path: '/status/phase', value: 'Scheduling' },
        ] });
        const err = await rejection(kube.patch(VMIS, NS, 'vmi-a', { type: 'json', ops: [
          { op: 'test', path: '/status/phase', value: 'Pending' },
          { op: 'replace', path: '/status/phase', value: 'Failed' },
        ] }));
        // assert
        assert.equal(ok.status?.phase, 'Scheduling');
        assert.ok(err instanceof KubeTransientError, String(err));
        assert.equal(err.reason, 'Conflict');
        assert.equal(err.status, 422);
      });

      test('an update from a stale read is a Conflict; a fresh one succeeds', async () => {
        // arrange
        const stale = await kube.get(VMIS, NS, 'vmi-a');
        assert.ok(stale);
        await kube.patch(VMIS, NS, 'vmi-a', { type: 'merge', body: { metadata: { labels: { touched: 'yes' } } } });
        // act
        const err = await rejection(kube.update(VMIS, { ...stale, metadata: { ...stale.metadata, annotations: { a: 'b' } } }));
        const fresh = await kube.get(VMIS, NS, 'vmi-a');
        assert.ok(fresh);
        const updated = await kube.update(VMIS, { ...fresh, metadata: { ...fresh.metadata, annotations: { a: 'b' } } });
        // assert
        assert.ok(err instanceof KubeTransientError && err.reason === 'Conflict' && err.status === 409, String(err));
        assert.equal(updated.metadata?.annotations?.a, 'b');
        assert.equal(updated.metadata?.labels?.touched, 'yes');
      });

      test('deleting answers true, then false once it is gone', async () => {
        await kube.create(VMIS, vmi('vmi-del'));
        assert.equal(await kube.delete(VMIS, NS, 'vmi-del'), true);
        assert.equal(await kube.delete(VMIS, NS, 'vmi-del'), false);
      });

      test('patching a missing object is NotFound', async () => {
        const err = await rejection(kube.patch(VMIS, NS, 'ghost', { type: 'merge', body: { metadata: { labels: { a: 'b' } } } }));
        assert.ok(err instanceof NotFoundError, String(err));
      });

      test('VMs, migrations, the KubeVirt CR and DataVolumes round-trip', async () => {
        // arrange
        const vm: VirtualMachine = { metadata: { name: 'vm-a', namespace: NS }, spec: { runStrategy: 'Halted', template: { spec: structuredClone(fixtureVmi.spec) } } };
        const mig: VirtualMachineInstanceMigration = { metadata: { name: 'mig-a', namespace: NS }, spec: { vmiName: 'vmi-a' } };
        const kv: KubeVirt = { apiVersion: 'kubevirt.io/v1', kind: 'KubeVirt', metadata: { name: 'kubevirt', namespace: 'kubevirt' }, spec: { configuration: { migrations: { parallelMigrationsPerCluster: 5 } } } };
        const dv: DataVolume = { metadata: { name: 'dv-a', namespace: NS }, spec: { source: { blank: {} }, storage: { resources: { requests: { storage: '1Gi' } } } } };
        // act
        await kube.create(VMS, vm);
        const patchedVm = await kube.patch(VMS, NS, 'vm-a', { type: 'merge', body: { status: { printableStatus: 'Stopped' } } }, { subresource: 'status' });
        await kube.create(MIGRATIONS, mig);
        const migrations = await kube.list(MIGRATIONS, undefined);
        // The reconciler only reads the KubeVirt CR; the operator installs it.
        await server.kubeConfig().makeApiClient(CustomObjectsApi).createNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', plural: 'kubevirts', namespace: 'kubevirt', body: kv });
        const kubevirts = await kube.list(KUBEVIRTS, undefined);
        const readKv = await kube.get(KUBEVIRTS, 'kubevirt', 'kubevirt');
        const createdDv = await kube.create(DATA_VOLUMES, dv);
        const readDv = await kube.get(DATA_VOLUMES, NS, 'dv-a');
        // assert
        assert.equal(patchedVm.status?.printableStatus, 'Stopped');
        assert.deepEqual(migrations.items.map((m) => m.metadata?.name), ['mig-a']);
        assert.ok(migrations.resourceVersion, 'a list carries the collection resourceVersion');
        assert.equal(readDv?.metadata?.uid, createdDv.metadata?.uid);
        assert.deepEqual(kubevirts.items.map((k) => k.metadata?.name), ['kubevirt']);
        assert.equal(readKv?.spec.configuration?.migrations?.parallelMigrationsPerCluster, 5);
        assert.equal(await kube.get(MIGRATIONS, NS, 'mig-a').then((m) => m?.spec.vmiName), 'vmi-a');
      });
    });

    describe('pods, PVCs and events through the facade', () => {
      test('a launcher pod created with generateName is found by its labels, not by others', async () => {
        // arrange
        const owner = await kube.create(VMIS, vmi('vmi-pod'));
        // act
        const pod = await kube.create(PODS, launcherPod(owner));
        const selector = `kubevirt.io=virt-launcher,kubevirt.io/created-by=${owner.metadata?.uid}`;
        const mine = await kube.list(PODS, NS, { labelSelector: selector, resourceVersion: pod.metadata?.resourceVersion });
        const others = await kube.list(PODS, NS, { labelSelector: 'kubevirt.io/created-by=someone-else' });
        const read = await kube.get(PODS, NS, pod.metadata?.name ?? '', { resourceVersion: pod.metadata?.resourceVersion });
        // assert
        assert.match(pod.metadata?.name ?? '', /^virt-launcher-vmi-pod-[a-z0-9]{5}$/);
        assert.deepEqual(mine.items.map((p) => p.metadata?.name), [pod.metadata?.name]);
        assert.deepEqual(others.items, []);
        assert.equal(read?.metadata?.ownerReferences?.[0]?.uid, owner.metadata?.uid);
      });

      test('a pod is evicted through pods/eviction; a refusing admission hook is a 429 TooManyRequests; a missing pod is NotFound', async () => {
        // arrange
        const owner = await kube.create(VMIS, vmi('vmi-evict'));
        const pod = await kube.create(PODS, launcherPod(owner));
        const name = pod.metadata?.name ?? '';
        const refused = await kube.create(PODS, launcherPod(owner));
        const stop = server.admission.onEviction((_core, req) => {
          if (req.pod.metadata.name === refused.metadata?.name) throw new ApiError(429, 'TooManyRequests', 'Eviction triggered evacuation of VMI "default/vmi-evict"');
        });
        // act
        await kube.evict(NS, name);
        const denied = await rejection(kube.evict(NS, refused.metadata?.name ?? ''));
        const missing = await rejection(kube.evict(NS, 'no-such-pod'));
        stop();
        // assert
        const after = await kube.get(PODS, NS, name);
        assert.ok(after === undefined || after.metadata?.deletionTimestamp, 'the evicted pod is gone or going');
        assert.ok(denied instanceof KubeTransientError && denied.status === 429 && denied.reason === 'TooManyRequests', String(denied));
        assert.match(String(denied), /Eviction triggered evacuation/);
        assert.ok(missing instanceof NotFoundError, String(missing));
        assert.ok((await kube.get(PODS, NS, refused.metadata?.name ?? '')) !== undefined, 'the refused pod stays');
      });

      test('pods come back as client-node models: timestamps are Dates', async () => {
        // arrange
        const owner = await kube.create(VMIS, vmi('vmi-pod-dates'));
        const created = await kube.create(PODS, launcherPod(owner));
        // act
        const read = await kube.get(PODS, NS, created.metadata?.name ?? '');
        const listed = await kube.list(PODS, NS, { labelSelector: `kubevirt.io/created-by=${owner.metadata?.uid}` });
        // assert: V1Pod types them as Date; code may call .getTime() on them
        for (const pod of [created, read, listed.items[0]]) {
          assert.ok(pod?.metadata?.creationTimestamp instanceof Date, `creationTimestamp is a Date, got ${typeof pod?.metadata?.creationTimestamp}`);
        }
      });

      test('a delete with a stale uid precondition is a Conflict; then true, then false', async () => {
        // arrange
        const owner = await kube.create(VMIS, vmi('vmi-pod-del'));
        const pod = await kube.create(PODS, launcherPod(owner));
        const name = pod.metadata?.name ?? '';
        // act
        const err = await rejection(kube.delete(PODS, NS, name, { preconditions: { uid: 'not-this-one' } }));
        const first = await kube.delete(PODS, NS, name, { preconditions: { uid: pod.metadata?.uid }, gracePeriodSeconds: 0 });
        const second = await kube.delete(PODS, NS, name);
        // assert
        assert.ok(err instanceof KubeTransientError && err.reason === 'Conflict', String(err));
        assert.equal(first, true);
        assert.equal(second, false);
        assert.equal(await kube.get(PODS, NS, name), undefined);
      });

      test('a pod with neither name nor generateName is Invalid (permanent)', async () => {
        const err = await rejection(kube.create(PODS, { metadata: { namespace: NS }, spec: { containers: [{ name: 'c', image: 'i' }] } }));
        assert.ok(err instanceof KubeInvalidError, String(err));
        assert.equal(err.reason, 'Invalid');
      });

      test('a missing PVC reads as undefined', async () => {
        assert.equal(await kube.get(PVCS, NS, 'no-such-claim'), undefined);
      });

      test('an event names the object, reason, type and the virtualmachine-controller source', async () => {
        // arrange
        const owner = await kube.create(VMIS, vmi('vmi-event'));
        // act
        await kube.createEvent({
          involvedObject: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', namespace: NS, name: 'vmi-event', uid: owner.metadata?.uid },
          type: 'Normal',
          reason: 'SuccessfulCreate',
          message: 'Created virtual machine pod virt-launcher-vmi-event-abcde',
        });
        // assert
        const events = await server.kubeConfig().makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: NS, fieldSelector: 'involvedObject.name=vmi-event' });
        const [event] = events.items;
        assert.equal(events.items.length, 1);
        assert.equal(event?.reason, 'SuccessfulCreate');
        assert.equal(event?.type, 'Normal');
        assert.equal(event?.involvedObject.uid, owner.metadata?.uid);
        assert.equal(event?.source?.component, 'virtualmachine-controller');
        assert.equal(event?.reportingComponent, 'virtualmachine-controller');
        assert.equal(event?.reportingInstance, 'test-1');
        assert.equal(event?.count, 1);
        assert.equal(event?.firstTimestamp?.toISOString(), NOW.toISOString());
      });
    });

    describe('pod patches, namespaces, nodes and migration policies through the facade', () => {
      const GATE = 'kubevirt.io/virtual-machine-unpaused';

      test('a strategic patch of a pod status sets one condition and keeps the others (merge by type)', async () => {
        // arrange
        const owner = await kube.create(VMIS, vmi('vmi-pod-patch'));
        const pod = await kube.create(PODS, launcherPod(owner));
        const name = pod.metadata?.name ?? '';
        await kube.patch(PODS, NS, name, { type: 'strategic', body: { status: { conditions: [{ type: 'PodScheduled', status: 'True' }] } } }, { subresource: 'status' });
        // act
        const patched = await kube.patch(PODS, NS, name, { type: 'strategic', body: { status: { conditions: [{ type: GATE, status: 'True', reason: 'NotPaused' }] } } }, { subresource: 'status' });
        // assert: a merge patch would have replaced the whole list
        const types = (patched.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`).sort();
        assert.deepEqual(types, ['PodScheduled=True', `${GATE}=True`]);
        assert.ok(patched.metadata?.creationTimestamp instanceof Date, 'the answer is a model like getPod\'s');
      });

      test('a merge patch of a pod writes its labels; a missing pod is NotFound', async () => {
        // arrange
        const owner = await kube.create(VMIS, vmi('vmi-pod-label'));
        const pod = await kube.create(PODS, launcherPod(owner));
        // act
        const patched = await kube.patch(PODS, NS, pod.metadata?.name ?? '', { type: 'merge', body: { metadata: { labels: { 'kubevirt.io/nodeName': 'node1' } } } });
        const err = await rejection(kube.patch(PODS, NS, 'no-such-pod', { type: 'merge', body: { metadata: { labels: { a: 'b' } } } }));
        // assert
        assert.equal(patched.metadata?.labels?.['kubevirt.io/nodeName'], 'node1');
        assert.equal(patched.metadata?.labels?.['kubevirt.io'], 'virt-launcher', 'other labels are kept');
        assert.ok(err instanceof NotFoundError, String(err));
      });

      test('a strategic patch of a custom resource is refused (415): core types only', async () => {
        // act
        const err = await rejection(kube.patch(VMIS, NS, 'vmi-a', { type: 'strategic', body: { metadata: { labels: { a: 'b' } } } }));
        // assert
        assert.ok(err instanceof KubeRequestError, String(err));
        assert.equal(err.status, 415);
      });

      test('namespaces and nodes are read by name (labels included); missing ones are undefined', async () => {
        // arrange: the cluster's own objects, created as an admin would
        const core = server.kubeConfig().makeApiClient(CoreV1Api);
        await core.createNamespace({ body: { metadata: { name: 'team-a', labels: { 'team': 'a', 'tier': 'gold' } } } });
        await core.createNode({ body: { metadata: { name: 'node-x', labels: { 'host-model-cpu.node.kubevirt.io/Skylake': 'true' } } } });
        // act
        const ns = await kube.get(NAMESPACES, undefined, 'team-a');
        const node = await kube.get(NODES, undefined, 'node-x');
        const missingNs = await kube.get(NAMESPACES, undefined, 'no-such-namespace');
        const missingNode = await kube.get(NODES, undefined, 'no-such-node');
        // assert
        assert.deepEqual({ team: ns?.metadata?.labels?.team, tier: ns?.metadata?.labels?.tier }, { team: 'a', tier: 'gold' });
        assert.equal(node?.metadata?.labels?.['host-model-cpu.node.kubevirt.io/Skylake'], 'true');
        assert.ok(node?.metadata?.creationTimestamp instanceof Date, 'nodes are models too: timestamps are Dates');
        assert.equal(missingNs, undefined);
        assert.equal(missingNode, undefined);
      });

      test('MigrationPolicies are listed cluster-wide', async () => {
        // arrange
        const policy: MigrationPolicy = {
          apiVersion: 'migrations.kubevirt.io/v1alpha1',
          kind: 'MigrationPolicy',
          metadata: { name: 'gold' },
          spec: { allowPostCopy: true, selectors: { namespaceSelector: { tier: 'gold' } } },
        };
        await server.kubeConfig().makeApiClient(CustomObjectsApi).createClusterCustomObject({ group: 'migrations.kubevirt.io', version: 'v1alpha1', plural: 'migrationpolicies', body: policy });
        // act
        const list = await kube.list(MIGRATION_POLICIES, undefined);
        // assert
        assert.deepEqual(list.items.map((p) => [p.metadata?.name, p.spec.allowPostCopy]), [['gold', true]]);
        assert.ok(list.resourceVersion, 'a list carries the collection resourceVersion');
      });
    });

    describe('apiserver failures map to the error hierarchy', () => {
      const cases = [
        { code: 429, reason: 'TooManyRequests' },
        { code: 500, reason: 'ServerError' },
        { code: 503, reason: 'ServerError' },
        { code: 409, reason: 'Conflict' },
      ] as const;
      for (const c of cases) {
        test(`HTTP ${c.code} → KubeTransientError ${c.reason}`, async () => {
          // arrange: no retry inside the request (below), so the answer itself is what comes back
          const once = make(server, 'reconciler', { retryAfter: { maxRetries: 0 } });
          server.faults.failNext(c.code, 1, { verb: 'get', resource: 'virtualmachineinstances', identity: 'reconciler' });
          // act
          const err = await rejection(once.get(VMIS, NS, 'vmi-a'));
          // assert
          assert.ok(err instanceof KubeTransientError, String(err));
          assert.equal(err.reason, c.reason);
          assert.equal(err.status, c.code);
          assert.match(err.message, /^get virtualmachineinstances default\/vmi-a: /);
          if (c.code === 429) assert.ok((err.retryAfterSeconds ?? 0) > 0, 'Retry-After is carried over');
        });
      }

      test("an answer with Retry-After is retried inside the request, as client-go's REST client does: a 429 for any verb, a 5xx for reads only", async () => {
        // arrange: waits recorded, not slept
        const retries: string[] = [];
        const waits: number[] = [];
        const patient = make(server, 'reconciler', { retryAfter: { onRetry: (r) => void retries.push(`${r.request.verb} ${r.status}`), sleep: async (ms) => void waits.push(ms) } });
        await patient.create(VMIS, vmi('vmi-retry'));
        server.faults.failNext(429, 3, { verb: 'get', resource: 'virtualmachineinstances', identity: 'reconciler' });
        // act + assert: three 429s (Retry-After: 1) waited out, the fourth try answered
        assert.equal((await patient.get(VMIS, NS, 'vmi-retry'))?.metadata?.name, 'vmi-retry');
        assert.deepEqual(retries, ['get 429', 'get 429', 'get 429']);
        assert.deepEqual(waits, [1000, 1000, 1000]);
        // a write's 429 too: refused before anything was done
        server.faults.failNext(429, 1, { verb: 'patch', resource: 'virtualmachineinstances', identity: 'reconciler' });
        await patient.patch(VMIS, NS, 'vmi-retry', { type: 'merge', body: { metadata: { labels: { retried: 'yes' } } } });
        assert.equal((await patient.get(VMIS, NS, 'vmi-retry'))?.metadata?.labels?.retried, 'yes');
        // a 503 with Retry-After: a read retries; a write is handed back (it may have been done)
        server.faults.failNext(503, 1, { verb: 'list', resource: 'virtualmachineinstances', identity: 'reconciler' });
        assert.ok((await patient.list(VMIS, NS)).items.length > 0);
        server.faults.failNext(503, 1, { verb: 'patch', resource: 'virtualmachineinstances', identity: 'reconciler' });
        const write = await rejection(patient.patch(VMIS, NS, 'vmi-retry', { type: 'merge', body: { metadata: { labels: { retried: 'twice' } } } }));
        assert.ok(write instanceof KubeTransientError && write.status === 503, String(write));
        // a 500 without Retry-After is never retried
        server.faults.failNext(500, 1, { verb: 'get', resource: 'virtualmachineinstances', identity: 'reconciler' });
        assert.ok((await rejection(patient.get(VMIS, NS, 'vmi-retry'))) instanceof KubeTransientError);
        assert.deepEqual(retries, ['get 429', 'get 429', 'get 429', 'patch 429', 'list 503']);
      });

      test('in-request retries stop after maxRetries (client-go: 10) and the last answer comes back', async () => {
        // arrange
        let retried = 0;
        const patient = make(server, 'reconciler', { retryAfter: { maxRetries: 2, onRetry: () => void retried++, sleep: async () => {} } });
        server.faults.failNext(429, 5, { verb: 'get', resource: 'virtualmachineinstances', identity: 'reconciler' });
        // act
        const err = await rejection(patient.get(VMIS, NS, 'vmi-retry'));
        // assert
        assert.ok(err instanceof KubeTransientError && err.reason === 'TooManyRequests', String(err));
        assert.equal(retried, 2);
        server.faults.clear();
      });

      test('an unreachable apiserver → KubeTransientError ServerError (network)', async () => {
        // arrange: a server that is gone
        const gone = await startApiServer({ port: 0 });
        await gone.close();
        // act
        const err = await rejection(make(gone, 'reconciler', {}).get(VMIS, NS, 'x'));
        // assert
        assert.ok(err instanceof KubeTransientError, String(err));
        assert.equal(err.reason, 'ServerError');
        assert.equal(err.status, undefined);
        assert.match(err.message, /network error/);
      });
    });

    describe('"not older than" reads send the resourceVersion', () => {
      const cases = [
        { name: 'GET of a custom resource', read: (rv: string) => kube.get(VMIS, NS, 'vmi-a', { resourceVersion: rv }) },
        { name: 'GET of a pod', read: (rv: string) => kube.get(PODS, NS, 'any', { resourceVersion: rv }) },
        { name: 'LIST of pods (NotOlderThan)', read: (rv: string) => kube.list(PODS, NS, { resourceVersion: rv }) },
        { name: 'LIST of migrations (NotOlderThan)', read: (rv: string) => kube.list(MIGRATIONS, NS, { resourceVersion: rv }) },
      ];
      for (const c of cases) {
        test(`${c.name}: a version the server has not reached yet is a 504 ServerError`, async () => {
          // arrange: the apiserver waits for a future version, then gives up with 504 — only if the
          // parameter actually reached it
          const future = String(server.control.resourceVersion() + 1_000_000);
          // act
          const err = await rejection(c.read(future));
          // assert
          assert.ok(err instanceof KubeTransientError && err.status === 504 && err.reason === 'ServerError', String(err));
        });
      }

      test('a version already reached reads normally', async () => {
        const rv = String(server.control.resourceVersion());
        assert.equal((await kube.get(VMIS, NS, 'vmi-a', { resourceVersion: rv }))?.metadata?.name, 'vmi-a');
      });
    });

    describe('generic verbs on any resource: cluster scope, subresources, scale', () => {
      test('a cluster-scoped resource (Node) goes through the same verbs', async () => {
        // act
        const created = await kube.create(NODES, { metadata: { name: 'generic-node', labels: { zone: 'a' } } });
        const got = await kube.get(NODES, undefined, 'generic-node');
        const listed = await kube.list(NODES, undefined, { labelSelector: 'zone=a' });
        const patched = await kube.patch(NODES, undefined, 'generic-node', { type: 'merge', body: { spec: { unschedulable: true } } });
        const gone = await kube.delete(NODES, undefined, 'generic-node');
        // assert
        assert.equal(created.metadata?.name, 'generic-node');
        assert.ok(got?.metadata?.creationTimestamp instanceof Date, 'core timestamps are Dates, as in client-node models');
        assert.deepEqual(listed.items.map((n) => n.metadata?.name), ['generic-node']);
        assert.equal(patched.spec?.unschedulable, true);
        assert.equal(gone, true);
        assert.equal(await kube.get(NODES, undefined, 'generic-node'), undefined);
        assert.equal(await kube.delete(NODES, undefined, 'generic-node'), false);
      });

      test('a cluster-scoped custom resource (MigrationPolicy): create, get, delete', async () => {
        // act
        await kube.create(MIGRATION_POLICIES, { metadata: { name: 'generic-policy' }, spec: { selectors: {} } } as MigrationPolicy);
        const got = await kube.get(MIGRATION_POLICIES, undefined, 'generic-policy');
        const gone = await kube.delete(MIGRATION_POLICIES, undefined, 'generic-policy');
        // assert
        assert.equal(got?.metadata?.name, 'generic-policy');
        assert.equal(gone, true);
      });

      test('a namespace on a cluster-scoped resource, or none on a namespaced one, is refused before any request', async () => {
        // arrange
        server.counters.reset();
        // act
        const clusterWithNs = await rejection(kube.get(NODES, NS, 'n'));
        const namespacedWithout = await rejection(kube.get(VMIS, undefined, 'v'));
        const noScale = await rejection(kube.getScale(VMIS, NS, 'v'));
        const createWithout = await rejection(kube.create(VMIS, { metadata: { name: 'x' } } as VirtualMachineInstance));
        // assert
        for (const err of [clusterWithNs, namespacedWithout, noScale, createWithout]) assert.ok(err instanceof InvalidInputError, String(err));
        assert.match(String((clusterWithNs as Error).message), /cluster-scoped/);
        assert.match(String((noScale as Error).message), /no \/scale/);
        assert.equal(server.counters.count({ identity: 'reconciler' }), 0, 'nothing was sent');
      });

      test('a replica set scales through /scale: spec.replicas changes, the Scale answers', async () => {
        // arrange
        await kube.create(VMI_REPLICA_SETS, { metadata: { name: 'generic-rs', namespace: NS }, spec: { replicas: 1, selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } }, spec: { domain: { devices: {} } } } } } as VirtualMachineInstanceReplicaSet);
        // act
        const before = await kube.getScale(VMI_REPLICA_SETS, NS, 'generic-rs');
        const after = await kube.updateScale(VMI_REPLICA_SETS, NS, 'generic-rs', 3);
        const rs = await kube.get(VMI_REPLICA_SETS, NS, 'generic-rs');
        const missing = await kube.getScale(VMI_REPLICA_SETS, NS, 'no-such-rs');
        const negative = await rejection(kube.updateScale(VMI_REPLICA_SETS, NS, 'generic-rs', -1));
        // assert
        assert.equal(before?.spec?.replicas, 1);
        assert.equal(after.spec?.replicas, 3);
        assert.equal(rs?.spec?.replicas, 3);
        assert.equal(missing, undefined);
        assert.ok(negative instanceof InvalidInputError);
      });

      test('status writes go to /status; a resource without one is refused', async () => {
        // arrange
        await kube.create(VM_POOLS, { metadata: { name: 'generic-pool', namespace: NS }, spec: { replicas: 0, selector: { matchLabels: { p: 'a' } }, virtualMachineTemplate: { spec: {} } } } as unknown as VirtualMachinePool);
        // act
        const patched = await kube.patch(VM_POOLS, NS, 'generic-pool', { type: 'merge', body: { status: { readyReplicas: 0, replicas: 0 }, spec: { replicas: 9 } } }, { subresource: 'status' });
        const noStatus = await rejection(kube.patch(CONTROLLER_REVISIONS, NS, 'r', { type: 'merge', body: {} }, { subresource: 'status' }));
        // assert
        assert.equal(patched.status?.replicas, 0);
        assert.equal(patched.spec?.replicas, 0, 'spec is not written through /status');
        assert.ok(noStatus instanceof InvalidInputError);
      });

      test('lists page with limit and continue', async () => {
        // arrange
        for (let i = 0; i < 3; i++) await kube.create(CONTROLLER_REVISIONS, { metadata: { name: `generic-rev-${i}`, namespace: NS, labels: { paging: 'yes' } }, revision: i + 1 });
        // act
        const first = await kube.list(CONTROLLER_REVISIONS, NS, { labelSelector: 'paging=yes', limit: 2 });
        const rest = await kube.list(CONTROLLER_REVISIONS, NS, { labelSelector: 'paging=yes', limit: 2, continue: first.continueToken });
        // assert
        assert.equal(first.items.length, 2);
        assert.ok(first.continueToken, 'a continue token for the next page');
        assert.deepEqual(rest.items.map((r) => r.metadata?.name), ['generic-rev-2']);
        assert.equal(rest.continueToken, undefined);
      });

      test('the counter names scale calls by subresource', async () => {
        // arrange
        const counter = new ApiCallCounter();
        const k = countingKubeClient(kube, counter);
        // act
        await k.getScale(VMI_REPLICA_SETS, NS, 'generic-rs');
        await k.updateScale(VMI_REPLICA_SETS, NS, 'generic-rs', 2);
        // assert
        assert.deepEqual(counter.byCall(), { 'get virtualmachineinstancereplicasets/scale': 1, 'patch virtualmachineinstancereplicasets/scale': 1 });
      });
    });

    describe('API calls per reconcile', () => {
      test('the counter sees every call the apiserver sees, by verb and resource', async () => {
        // arrange
        const counter = new ApiCallCounter();
        const k = countingKubeClient(kube, counter);
        server.counters.reset();
        // act: a reconcile-shaped sequence, including a miss and a failure
        const owner = await k.get(VMIS, NS, 'vmi-a');
        await k.list(PODS, NS, { labelSelector: `kubevirt.io/created-by=${owner?.metadata?.uid}` });
        await k.get(VMIS, NS, 'missing');
        await rejection(k.create(VMIS, vmi('vmi-a')));
        await k.patch(VMIS, NS, 'vmi-a', { type: 'merge', body: { status: { phase: 'Scheduled' } } });
        // assert
        assert.deepEqual(counter.byCall(), {
          'create virtualmachineinstances': 1,
          'get virtualmachineinstances': 2,
          'list pods': 1,
          'patch virtualmachineinstances': 1,
        });
        assert.equal(counter.total(), 5);
        assert.equal(counter.ofVerb('get', 'list'), 3);
        assert.equal(server.counters.count({ identity: 'reconciler' }), counter.total(), 'one facade call = one HTTP request');
      });
    });
  });
}
