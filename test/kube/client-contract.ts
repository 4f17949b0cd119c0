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
import { startApiServer, type ApiServer } from '../../infra/sandbox/apiserver/index.ts';
import type { DataVolume, KubeVirt, MigrationPolicy, VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { ApiCallCounter, countingKubeClient } from '../../shared/kube/call-counter.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { AlreadyExistsError, KubeInvalidError, KubeRequestError, KubeTransientError, NotFoundError } from '../../shared/kube/errors.ts';
import type { KubeClientOptions } from '../../shared/kube/requests.ts';
import { projectRoot } from '../support/reference.ts';
import { kubeClientWireContract } from './client-wire-contract.ts';

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
        const created = await kube.createVMI(vmi('vmi-a'));
        const read = await kube.getVMI(NS, 'vmi-a', { resourceVersion: created.metadata?.resourceVersion });
        const missing = await kube.getVMI(NS, 'nope');
        // assert
        assert.ok(created.metadata?.uid, 'the server assigns a uid');
        assert.equal(read?.metadata?.uid, created.metadata?.uid);
        assert.equal(read?.spec.domain.devices.disks?.[0]?.name, 'containerdisk');
        assert.equal(missing, undefined);
      });

      test('creating the same name twice is AlreadyExists', async () => {
        const err = await rejection(kube.createVMI(vmi('vmi-a')));
        assert.ok(err instanceof AlreadyExistsError, String(err));
        assert.equal(err.reason, 'AlreadyExists');
      });

      test('a VMI has no /status subresource (as in KubeVirt): a merge patch sets status on the object', async () => {
        // act
        const patched = await kube.patchVMI(NS, 'vmi-a', { type: 'merge', body: { status: { phase: 'Pending' } } });
        const err = await rejection(kube.patchVMI(NS, 'vmi-a', { type: 'merge', body: { status: { phase: 'Pending' } } }, { subresource: 'status' }));
        // assert
        assert.equal(patched.status?.phase, 'Pending');
        assert.ok(err instanceof Error, 'virtualmachineinstances/status does not exist');
      });

      test('a JSON patch applies when its test holds, and a failed test is a retryable Conflict', async () => {
        // act
        const ok = await kube.patchVMI(NS, 'vmi-a', { type: 'json', ops: [
          { op: 'test', path: '/status/phase', value: 'Pending' },
          { op: 'replace', path: '/status/phase', value: 'Scheduling' },
        ] });
        const err = await rejection(kube.patchVMI(NS, 'vmi-a', { type: 'json', ops: [
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
        const stale = await kube.getVMI(NS, 'vmi-a');
        assert.ok(stale);
        await kube.patchVMI(NS, 'vmi-a', { type: 'merge', body: { metadata: { labels: { touched: 'yes' } } } });
        // act
        const err = await rejection(kube.updateVMI({ ...stale, metadata: { ...stale.metadata, annotations: { a: 'b' } } }));
        const fresh = await kube.getVMI(NS, 'vmi-a');
        assert.ok(fresh);
        const updated = await kube.updateVMI({ ...fresh, metadata: { ...fresh.metadata, annotations: { a: 'b' } } });
        // assert
        assert.ok(err instanceof KubeTransientError && err.reason === 'Conflict' && err.status === 409, String(err));
        assert.equal(updated.metadata?.annotations?.a, 'b');
        assert.equal(updated.metadata?.labels?.touched, 'yes');
      });

      test('deleting answers true, then false once it is gone', async () => {
        await kube.createVMI(vmi('vmi-del'));
        assert.equal(await kube.deleteVMI(NS, 'vmi-del'), true);
        assert.equal(await kube.deleteVMI(NS, 'vmi-del'), false);
      });

      test('patching a missing object is NotFound', async () => {
        const err = await rejection(kube.patchVMI(NS, 'ghost', { type: 'merge', body: { metadata: { labels: { a: 'b' } } } }));
        assert.ok(err instanceof NotFoundError, String(err));
      });

      test('VMs, migrations, the KubeVirt CR and DataVolumes round-trip', async () => {
        // arrange
        const vm: VirtualMachine = { metadata: { name: 'vm-a', namespace: NS }, spec: { runStrategy: 'Halted', template: { spec: structuredClone(fixtureVmi.spec) } } };
        const mig: VirtualMachineInstanceMigration = { metadata: { name: 'mig-a', namespace: NS }, spec: { vmiName: 'vmi-a' } };
        const kv: KubeVirt = { metadata: { name: 'kubevirt', namespace: 'kubevirt' }, spec: { configuration: { migrations: { parallelMigrationsPerCluster: 5 } } } };
        const dv: DataVolume = { metadata: { name: 'dv-a', namespace: NS }, spec: { source: { blank: {} }, storage: { resources: { requests: { storage: '1Gi' } } } } };
        // act
        await kube.createVM(vm);
        const patchedVm = await kube.patchVM(NS, 'vm-a', { type: 'merge', body: { status: { printableStatus: 'Stopped' } } }, { subresource: 'status' });
        await kube.createMigration(mig);
        const migrations = await kube.listMigrations(undefined);
        // The reconciler only reads the KubeVirt CR; the operator installs it.
        await server.kubeConfig().makeApiClient(CustomObjectsApi).createNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', plural: 'kubevirts', namespace: 'kubevirt', body: kv });
        const kubevirts = await kube.listKubeVirts(undefined);
        const readKv = await kube.getKubeVirt('kubevirt', 'kubevirt');
        const createdDv = await kube.createDataVolume(dv);
        const readDv = await kube.getDataVolume(NS, 'dv-a');
        // assert
        assert.equal(patchedVm.status?.printableStatus, 'Stopped');
        assert.deepEqual(migrations.items.map((m) => m.metadata?.name), ['mig-a']);
        assert.ok(migrations.resourceVersion, 'a list carries the collection resourceVersion');
        assert.equal(readDv?.metadata?.uid, createdDv.metadata?.uid);
        assert.deepEqual(kubevirts.items.map((k) => k.metadata?.name), ['kubevirt']);
        assert.equal(readKv?.spec.configuration?.migrations?.parallelMigrationsPerCluster, 5);
        assert.equal(await kube.getMigration(NS, 'mig-a').then((m) => m?.spec.vmiName), 'vmi-a');
      });
    });

    describe('pods, PVCs and events through the facade', () => {
      test('a launcher pod created with generateName is found by its labels, not by others', async () => {
        // arrange
        const owner = await kube.createVMI(vmi('vmi-pod'));
        // act
        const pod = await kube.createPod(NS, launcherPod(owner));
        const selector = `kubevirt.io=virt-launcher,kubevirt.io/created-by=${owner.metadata?.uid}`;
        const mine = await kube.listPods(NS, { labelSelector: selector, resourceVersion: pod.metadata?.resourceVersion });
        const others = await kube.listPods(NS, { labelSelector: 'kubevirt.io/created-by=someone-else' });
        const read = await kube.getPod(NS, pod.metadata?.name ?? '', { resourceVersion: pod.metadata?.resourceVersion });
        // assert
        assert.match(pod.metadata?.name ?? '', /^virt-launcher-vmi-pod-[a-z0-9]{5}$/);
        assert.deepEqual(mine.items.map((p) => p.metadata?.name), [pod.metadata?.name]);
        assert.deepEqual(others.items, []);
        assert.equal(read?.metadata?.ownerReferences?.[0]?.uid, owner.metadata?.uid);
      });

      test('pods come back as client-node models: timestamps are Dates', async () => {
        // arrange
        const owner = await kube.createVMI(vmi('vmi-pod-dates'));
        const created = await kube.createPod(NS, launcherPod(owner));
        // act
        const read = await kube.getPod(NS, created.metadata?.name ?? '');
        const listed = await kube.listPods(NS, { labelSelector: `kubevirt.io/created-by=${owner.metadata?.uid}` });
        // assert: V1Pod types them as Date; code may call .getTime() on them
        for (const pod of [created, read, listed.items[0]]) {
          assert.ok(pod?.metadata?.creationTimestamp instanceof Date, `creationTimestamp is a Date, got ${typeof pod?.metadata?.creationTimestamp}`);
        }
      });

      test('a delete with a stale uid precondition is a Conflict; then true, then false', async () => {
        // arrange
        const owner = await kube.createVMI(vmi('vmi-pod-del'));
        const pod = await kube.createPod(NS, launcherPod(owner));
        const name = pod.metadata?.name ?? '';
        // act
        const err = await rejection(kube.deletePod(NS, name, { preconditions: { uid: 'not-this-one' } }));
        const first = await kube.deletePod(NS, name, { preconditions: { uid: pod.metadata?.uid }, gracePeriodSeconds: 0 });
        const second = await kube.deletePod(NS, name);
        // assert
        assert.ok(err instanceof KubeTransientError && err.reason === 'Conflict', String(err));
        assert.equal(first, true);
        assert.equal(second, false);
        assert.equal(await kube.getPod(NS, name), undefined);
      });

      test('a pod with neither name nor generateName is Invalid (permanent)', async () => {
        const err = await rejection(kube.createPod(NS, { metadata: {}, spec: { containers: [{ name: 'c', image: 'i' }] } }));
        assert.ok(err instanceof KubeInvalidError, String(err));
        assert.equal(err.reason, 'Invalid');
      });

      test('a missing PVC reads as undefined', async () => {
        assert.equal(await kube.getPVC(NS, 'no-such-claim'), undefined);
      });

      test('an event names the object, reason, type and the virtualmachine-controller source', async () => {
        // arrange
        const owner = await kube.createVMI(vmi('vmi-event'));
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
        const owner = await kube.createVMI(vmi('vmi-pod-patch'));
        const pod = await kube.createPod(NS, launcherPod(owner));
        const name = pod.metadata?.name ?? '';
        await kube.patchPod(NS, name, { type: 'strategic', body: { status: { conditions: [{ type: 'PodScheduled', status: 'True' }] } } }, { subresource: 'status' });
        // act
        const patched = await kube.patchPod(NS, name, { type: 'strategic', body: { status: { conditions: [{ type: GATE, status: 'True', reason: 'NotPaused' }] } } }, { subresource: 'status' });
        // assert: a merge patch would have replaced the whole list
        const types = (patched.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`).sort();
        assert.deepEqual(types, ['PodScheduled=True', `${GATE}=True`]);
        assert.ok(patched.metadata?.creationTimestamp instanceof Date, 'the answer is a model like getPod\'s');
      });

      test('a merge patch of a pod writes its labels; a missing pod is NotFound', async () => {
        // arrange
        const owner = await kube.createVMI(vmi('vmi-pod-label'));
        const pod = await kube.createPod(NS, launcherPod(owner));
        // act
        const patched = await kube.patchPod(NS, pod.metadata?.name ?? '', { type: 'merge', body: { metadata: { labels: { 'kubevirt.io/nodeName': 'node1' } } } });
        const err = await rejection(kube.patchPod(NS, 'no-such-pod', { type: 'merge', body: { metadata: { labels: { a: 'b' } } } }));
        // assert
        assert.equal(patched.metadata?.labels?.['kubevirt.io/nodeName'], 'node1');
        assert.equal(patched.metadata?.labels?.['kubevirt.io'], 'virt-launcher', 'other labels are kept');
        assert.ok(err instanceof NotFoundError, String(err));
      });

      test('a strategic patch of a custom resource is refused (415): core types only', async () => {
        // act
        const err = await rejection(kube.patchVMI(NS, 'vmi-a', { type: 'strategic', body: { metadata: { labels: { a: 'b' } } } }));
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
        const ns = await kube.getNamespace('team-a');
        const node = await kube.getNode('node-x');
        const missingNs = await kube.getNamespace('no-such-namespace');
        const missingNode = await kube.getNode('no-such-node');
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
        const list = await kube.listMigrationPolicies();
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
          // arrange
          server.faults.failNext(c.code, 1, { verb: 'get', resource: 'virtualmachineinstances', identity: 'reconciler' });
          // act
          const err = await rejection(kube.getVMI(NS, 'vmi-a'));
          // assert
          assert.ok(err instanceof KubeTransientError, String(err));
          assert.equal(err.reason, c.reason);
          assert.equal(err.status, c.code);
          assert.match(err.message, /^get virtualmachineinstances default\/vmi-a: /);
          if (c.code === 429) assert.ok((err.retryAfterSeconds ?? 0) > 0, 'Retry-After is carried over');
        });
      }

      test('an unreachable apiserver → KubeTransientError ServerError (network)', async () => {
        // arrange: a server that is gone
        const gone = await startApiServer({ port: 0 });
        await gone.close();
        // act
        const err = await rejection(make(gone, 'reconciler', {}).getVMI(NS, 'x'));
        // assert
        assert.ok(err instanceof KubeTransientError, String(err));
        assert.equal(err.reason, 'ServerError');
        assert.equal(err.status, undefined);
        assert.match(err.message, /network error/);
      });
    });

    describe('"not older than" reads send the resourceVersion', () => {
      const cases = [
        { name: 'GET of a custom resource', read: (rv: string) => kube.getVMI(NS, 'vmi-a', { resourceVersion: rv }) },
        { name: 'GET of a pod', read: (rv: string) => kube.getPod(NS, 'any', { resourceVersion: rv }) },
        { name: 'LIST of pods (NotOlderThan)', read: (rv: string) => kube.listPods(NS, { resourceVersion: rv }) },
        { name: 'LIST of migrations (NotOlderThan)', read: (rv: string) => kube.listMigrations(NS, { resourceVersion: rv }) },
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
        assert.equal((await kube.getVMI(NS, 'vmi-a', { resourceVersion: rv }))?.metadata?.name, 'vmi-a');
      });
    });

    describe('API calls per reconcile', () => {
      test('the counter sees every call the apiserver sees, by verb and resource', async () => {
        // arrange
        const counter = new ApiCallCounter();
        const k = countingKubeClient(kube, counter);
        server.counters.reset();
        // act: a reconcile-shaped sequence, including a miss and a failure
        const owner = await k.getVMI(NS, 'vmi-a');
        await k.listPods(NS, { labelSelector: `kubevirt.io/created-by=${owner?.metadata?.uid}` });
        await k.getVMI(NS, 'missing');
        await rejection(k.createVMI(vmi('vmi-a')));
        await k.patchVMI(NS, 'vmi-a', { type: 'merge', body: { status: { phase: 'Scheduled' } } });
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
