/**
 * The wire half of the KubeClient contract: every implementation sends the requests of
 * docs/kube-client.md, "client-node as it behaves on the wire" — method, path, query (form-encoded), Content-Type, body, bearer token —
 * checked on a server that only records what it receives.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sandboxKubeConfig } from '../../sandbox/apiserver/kubeconfig.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { eventFor } from '../../shared/kube/requests.ts';
import type { KubeClientFactory } from './client-contract.ts';
import { CONTROLLER_REVISIONS, DATA_VOLUMES, KUBEVIRTS, MIGRATIONS, MIGRATION_POLICIES, NAMESPACES, NODES, PODS, VMI_REPLICA_SETS, VM_POOLS, VMIS, VMS } from '../../shared/api/resources.ts';

/** One request as the server saw it. */
export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  /** The raw query string, as sent. */
  readonly rawQuery: string;
  readonly query: Record<string, string>;
  readonly contentType: string | undefined;
  readonly authorization: string | undefined;
  readonly body: unknown;
}

/** A 127.0.0.1 server that records every request and answers an empty object/list. */
export async function startRecorder(): Promise<{ url: string; seen: SeenRequest[]; server: Server }> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const text = Buffer.concat(chunks).toString('utf8');
      seen.push({
        method: req.method ?? '',
        path: url.pathname,
        rawQuery: url.search.slice(1),
        query: Object.fromEntries(url.searchParams),
        contentType: text ? req.headers['content-type'] : undefined,
        authorization: req.headers.authorization,
        body: text ? (JSON.parse(text) as unknown) : undefined,
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"metadata":{},"items":[]}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

const NS = 'default';
const AT = new Date('2026-03-01T12:00:00Z');
const SELECTOR = 'kubevirt.io=virt-launcher,kubevirt.io/created-by in (u1,u2),!kubevirt.io/deleted';
const VMI_PATH = '/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances';
const EVENT = {
  involvedObject: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', namespace: NS, name: 'a', uid: 'u-1' },
  type: 'Warning',
  reason: 'FailedCreate',
  message: 'boom',
} as const;

interface WireCase {
  readonly name: string;
  readonly call: (k: KubeClient) => Promise<unknown>;
  readonly want: Partial<Omit<SeenRequest, 'authorization'>>;
}

const CASES: readonly WireCase[] = [
  {
    name: 'GET of a replica set\'s /scale',
    call: (k) => k.getScale(VMI_REPLICA_SETS, NS, 'rs'),
    want: { method: 'GET', path: '/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstancereplicasets/rs/scale', body: undefined },
  },
  {
    name: 'scaling a pool is a merge patch of /scale',
    call: (k) => k.updateScale(VM_POOLS, NS, 'pool', 3),
    want: { method: 'PATCH', path: '/apis/pool.kubevirt.io/v1beta1/namespaces/default/virtualmachinepools/pool/scale', contentType: 'application/merge-patch+json', body: { spec: { replicas: 3 } } },
  },
  {
    name: 'LIST of ControllerRevisions (apps/v1) by label, one page',
    call: (k) => k.list(CONTROLLER_REVISIONS, NS, { labelSelector: 'a=b', limit: 10, continue: 'tok' }),
    want: { method: 'GET', path: '/apis/apps/v1/namespaces/default/controllerrevisions', query: { labelSelector: 'a=b', limit: '10', continue: 'tok' } },
  },
  {
    name: 'PATCH of a node (cluster-scoped: no namespace in the path)',
    call: (k) => k.patch(NODES, undefined, 'node1', { type: 'merge', body: { spec: { unschedulable: true } } }),
    want: { method: 'PATCH', path: '/api/v1/nodes/node1', contentType: 'application/merge-patch+json', body: { spec: { unschedulable: true } } },
  },
  {
    name: 'DELETE of a cluster-scoped MigrationPolicy',
    call: (k) => k.delete(MIGRATION_POLICIES, undefined, 'p'),
    want: { method: 'DELETE', path: '/apis/migrations.kubevirt.io/v1alpha1/migrationpolicies/p', body: undefined },
  },
  {
    name: 'GET of a VMI "not older than" a version',
    call: (k) => k.get(VMIS, NS, 'a', { resourceVersion: '5' }),
    want: { method: 'GET', path: `${VMI_PATH}/a`, query: { resourceVersion: '5' }, body: undefined },
  },
  {
    name: 'LIST of pods by selectors, NotOlderThan, form-encoded as client-node does',
    call: (k) => k.list(PODS, NS, { labelSelector: SELECTOR, fieldSelector: 'spec.nodeName=node1', resourceVersion: '7' }),
    want: {
      method: 'GET',
      path: '/api/v1/namespaces/default/pods',
      query: { labelSelector: SELECTOR, fieldSelector: 'spec.nodeName=node1', resourceVersion: '7', resourceVersionMatch: 'NotOlderThan' },
    },
  },
  {
    name: 'LIST of migrations in all namespaces',
    call: (k) => k.list(MIGRATIONS, undefined),
    want: { method: 'GET', path: '/apis/kubevirt.io/v1/virtualmachineinstancemigrations', query: {} },
  },
  {
    name: 'LIST of KubeVirt CRs in one namespace',
    call: (k) => k.list(KUBEVIRTS, 'kubevirt'),
    want: { method: 'GET', path: '/apis/kubevirt.io/v1/namespaces/kubevirt/kubevirts', query: {} },
  },
  {
    name: 'merge patch of a VMI',
    call: (k) => k.patch(VMIS, NS, 'a', { type: 'merge', body: { metadata: { labels: { x: 'y' } } } }),
    want: { method: 'PATCH', path: `${VMI_PATH}/a`, contentType: 'application/merge-patch+json', body: { metadata: { labels: { x: 'y' } } } },
  },
  {
    name: 'JSON patch of a VM status',
    call: (k) => k.patch(VMS, NS, 'v', { type: 'json', ops: [{ op: 'test', path: '/status/ready', value: false }] }, { subresource: 'status' }),
    want: {
      method: 'PATCH',
      path: '/apis/kubevirt.io/v1/namespaces/default/virtualmachines/v/status',
      contentType: 'application/json-patch+json',
      body: [{ op: 'test', path: '/status/ready', value: false }],
    },
  },
  {
    name: 'strategic merge patch of a pod status (one readiness-gate condition)',
    call: (k) =>
      k.patch(PODS, NS, 'p', { type: 'strategic', body: { status: { conditions: [{ type: 'kubevirt.io/virtual-machine-unpaused', status: 'True' }] } } }, { subresource: 'status' }),
    want: {
      method: 'PATCH',
      path: '/api/v1/namespaces/default/pods/p/status',
      contentType: 'application/strategic-merge-patch+json',
      body: { status: { conditions: [{ type: 'kubevirt.io/virtual-machine-unpaused', status: 'True' }] } },
    },
  },
  {
    name: 'merge patch of a pod',
    call: (k) => k.patch(PODS, NS, 'p', { type: 'merge', body: { metadata: { labels: { 'kubevirt.io/nodeName': 'node1' } } } }),
    want: { method: 'PATCH', path: '/api/v1/namespaces/default/pods/p', contentType: 'application/merge-patch+json', body: { metadata: { labels: { 'kubevirt.io/nodeName': 'node1' } } } },
  },
  {
    name: 'LIST of MigrationPolicies (cluster-scoped)',
    call: (k) => k.list(MIGRATION_POLICIES, undefined),
    want: { method: 'GET', path: '/apis/migrations.kubevirt.io/v1alpha1/migrationpolicies', query: {}, body: undefined },
  },
  {
    name: 'GET of a namespace (cluster-scoped)',
    call: (k) => k.get(NAMESPACES, undefined, 'team-a'),
    want: { method: 'GET', path: '/api/v1/namespaces/team-a', query: {}, body: undefined },
  },
  {
    name: 'GET of a node "not older than" a version',
    call: (k) => k.get(NODES, undefined, 'node1', { resourceVersion: '9' }),
    want: { method: 'GET', path: '/api/v1/nodes/node1', query: { resourceVersion: '9' }, body: undefined },
  },
  {
    name: 'PUT of a migration status',
    call: (k) => k.update(MIGRATIONS, { metadata: { name: 'm', namespace: NS, resourceVersion: '3' }, spec: { vmiName: 'a' } }, { subresource: 'status' }),
    want: {
      method: 'PUT',
      path: '/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstancemigrations/m/status',
      contentType: 'application/json',
      body: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'm', namespace: NS, resourceVersion: '3' }, spec: { vmiName: 'a' } },
    },
  },
  {
    // Every create and update body carries the resource's apiVersion and kind (custom resources need them on a real server).
    name: 'POST of a launcher pod with generateName',
    call: (k) => k.create(PODS, { metadata: { namespace: NS, generateName: 'virt-launcher-a-' }, spec: { containers: [{ name: 'compute', image: 'i' }] } }),
    want: {
      method: 'POST',
      path: '/api/v1/namespaces/default/pods',
      contentType: 'application/json',
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: NS, generateName: 'virt-launcher-a-' }, spec: { containers: [{ name: 'compute', image: 'i' }] } },
    },
  },
  {
    name: 'POST of a DataVolume',
    call: (k) => k.create(DATA_VOLUMES, { metadata: { name: 'dv', namespace: NS }, spec: { source: { blank: {} } } }),
    want: { method: 'POST', path: '/apis/cdi.kubevirt.io/v1beta1/namespaces/default/datavolumes', body: { apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', metadata: { name: 'dv', namespace: NS }, spec: { source: { blank: {} } } } },
  },
  {
    // kube-apiserver reads DeleteOptions from the body when there is one and ignores the query then.
    name: 'DELETE of a pod with preconditions: grace period, preconditions and propagation all in the body',
    call: (k) => k.delete(PODS, NS, 'p', { gracePeriodSeconds: 0, preconditions: { uid: 'u-9' }, propagationPolicy: 'Background' }),
    want: {
      method: 'DELETE',
      path: '/api/v1/namespaces/default/pods/p',
      query: {},
      contentType: 'application/json',
      body: { gracePeriodSeconds: 0, preconditions: { uid: 'u-9' }, propagationPolicy: 'Background' },
    },
  },
  {
    name: 'DELETE of a pod with only a grace period: in the query, no body',
    call: (k) => k.delete(PODS, NS, 'p', { gracePeriodSeconds: 0 }),
    want: { method: 'DELETE', path: '/api/v1/namespaces/default/pods/p', query: { gracePeriodSeconds: '0' } },
  },
  {
    name: 'DELETE of a VMI without options has no body',
    call: (k) => k.delete(VMIS, NS, 'a'),
    want: { method: 'DELETE', path: `${VMI_PATH}/a`, query: {}, body: undefined },
  },
  {
    name: 'POST of an Event in the involved object\'s namespace',
    call: (k) => k.createEvent(EVENT),
    want: {
      method: 'POST',
      path: '/api/v1/namespaces/default/events',
      contentType: 'application/json',
      body: JSON.parse(JSON.stringify(eventFor(EVENT, { component: 'virtualmachine-controller', reportingInstance: 'wire-1', at: AT }))) as unknown,
    },
  },
];

/** Registers the wire tests for one implementation. */
export function kubeClientWireContract(make: KubeClientFactory): void {
  describe('sends the requests of docs/kube-client.md, "client-node as it behaves on the wire"', () => {
    let recorder: Awaited<ReturnType<typeof startRecorder>>;
    let kube: KubeClient;
    before(async () => {
      recorder = await startRecorder();
      const url = recorder.url;
      kube = make({ url, kubeConfig: (identity = 'admin') => sandboxKubeConfig(url, identity) }, 'wire-identity', { now: () => AT, reportingInstance: 'wire-1' });
    });
    after(() => {
      recorder.server.closeAllConnections();
      recorder.server.close();
    });

    for (const c of CASES) {
      test(c.name, async () => {
        // arrange
        const before = recorder.seen.length;
        // act
        await c.call(kube);
        // assert: exactly one request, with the expected parts
        const seen = recorder.seen.slice(before);
        assert.equal(seen.length, 1, 'one facade call = one HTTP request');
        const [r] = seen;
        assert.ok(r);
        assert.equal(r.authorization, 'Bearer wire-identity');
        const got = Object.fromEntries(Object.keys(c.want).map((k) => [k, r[k as keyof SeenRequest]]));
        assert.deepEqual(got, c.want);
      });
    }

    test('query values are form-encoded (space +, comma %2C, parentheses, !)', async () => {
      // act
      await kube.list(PODS, NS, { labelSelector: SELECTOR });
      // assert
      assert.equal(recorder.seen.at(-1)?.rawQuery, 'labelSelector=kubevirt.io%3Dvirt-launcher%2Ckubevirt.io%2Fcreated-by+in+%28u1%2Cu2%29%2C%21kubevirt.io%2Fdeleted');
    });
  });
}
