import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { startApiServer, type ApiServer } from '../../../infra/sandbox/apiserver/index.ts';

const DIR = join(import.meta.dirname, '..', '..', '..', 'infra', 'kubernetes');

interface Manifest extends KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [k: string]: unknown;
}
interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** Every document of every manifest file, namespace first (the others live in it). */
function loadManifests(): Array<{ file: string; obj: Manifest }> {
  const out: Array<{ file: string; obj: Manifest }> = [];
  for (const file of readdirSync(DIR).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(DIR, file), 'utf8'))) {
      assert.equal(doc.errors.length, 0, `${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
      const obj = doc.toJS() as Manifest | null;
      if (obj !== null) out.push({ file, obj });
    }
  }
  return out.sort((a, b) => Number(b.obj.kind === 'Namespace') - Number(a.obj.kind === 'Namespace'));
}

const manifests = loadManifests();
const find = (kind: string, name: string): Manifest => {
  const m = manifests.find((x) => x.obj.kind === kind && x.obj.metadata.name === name)?.obj;
  assert.ok(m, `${kind}/${name} is missing from infra/kubernetes`);
  return m;
};

describe('infra/kubernetes: manifests', () => {
  test('every document parses and has apiVersion, kind and a name', () => {
    assert.ok(manifests.length >= 12, `found ${manifests.length} objects`);
    for (const { file, obj } of manifests) {
      assert.ok(obj.apiVersion && obj.kind && obj.metadata?.name, `${file}: ${JSON.stringify(obj).slice(0, 80)}`);
    }
  });

  test('relay RBAC: get/list/watch only, on exactly the watched resources', () => {
    const rules = find('ClusterRole', 'virt-reconciler-relay').rules as Rule[];
    for (const r of rules) assert.deepEqual([...r.verbs].sort(), ['get', 'list', 'watch'], `relay must never write: ${JSON.stringify(r)}`);
    const granted = rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.map((res) => `${g}/${res}`))).sort();
    assert.deepEqual(granted, [
      '/persistentvolumeclaims',
      '/pods',
      'cdi.kubevirt.io/datavolumes',
      'kubevirt.io/kubevirts',
      'kubevirt.io/virtualmachineinstancemigrations',
      'kubevirt.io/virtualmachineinstances',
      'kubevirt.io/virtualmachines',
      'migrations.kubevirt.io/migrationpolicies',
    ]);
    const binding = find('ClusterRoleBinding', 'virt-reconciler-relay') as unknown as { subjects: Array<{ kind: string; name: string; namespace: string }> };
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'virt-reconciler-relay', namespace: 'virt-reconciler' }]);
  });

  test('functions RBAC: no wildcards, no watch, writes only where a controller writes', () => {
    const rules = find('ClusterRole', 'virt-reconciler-functions').rules as Rule[];
    const verbs = (group: string, res: string): string[] => rules.filter((r) => r.apiGroups.includes(group) && r.resources.includes(res)).flatMap((r) => r.verbs).sort();
    for (const r of rules) {
      assert.ok(![...r.verbs, ...r.resources, ...r.apiGroups].includes('*'), `wildcard in ${JSON.stringify(r)}`);
      assert.ok(!r.verbs.includes('watch'), 'functions do not watch (the relay does)');
    }
    assert.deepEqual(verbs('', 'pods'), ['create', 'delete', 'get', 'list', 'patch']);
    assert.deepEqual(verbs('', 'events'), ['create', 'patch']);
    assert.deepEqual(verbs('', 'persistentvolumeclaims'), ['get', 'list'], 'PVCs are read, never written');
    assert.ok(verbs('kubevirt.io', 'virtualmachineinstances/status').includes('patch'));
    assert.ok(verbs('cdi.kubevirt.io', 'datavolumes').includes('create'), 'VM dataVolumeTemplates');
    assert.deepEqual(verbs('coordination.k8s.io', 'leases'), [], 'leases are namespaced: in a Role, not the ClusterRole');
    const leases = find('Role', 'virt-reconciler-functions-leases').rules as Rule[];
    assert.deepEqual(leases[0]?.resources, ['leases']);
    const binding = find('ClusterRoleBinding', 'virt-reconciler-functions') as unknown as { subjects: Array<{ kind: string; name: string }> };
    assert.deepEqual(binding.subjects.map((s) => `${s.kind}:${s.name}`), ['Group:virt-reconciler:functions'], 'the group the EKS access entries map the Lambda roles to');
  });

  test('relay Deployment: 2 replicas, probes on /healthz and /readyz, a metrics port, its ServiceAccount, a documented placeholder image', () => {
    const d = find('Deployment', 'virt-reconciler-relay') as unknown as {
      spec: { replicas: number; template: { spec: { serviceAccountName: string; containers: Array<{ image: string; ports: Array<{ name: string; containerPort: number }>; livenessProbe: { httpGet: { path: string } }; readinessProbe: { httpGet: { path: string } } }> } } };
    };
    const c = d.spec.template.spec.containers[0]!;
    assert.equal(d.spec.replicas, 2);
    assert.equal(d.spec.template.spec.serviceAccountName, 'virt-reconciler-relay');
    assert.equal(c.livenessProbe.httpGet.path, '/healthz');
    assert.equal(c.readinessProbe.httpGet.path, '/readyz');
    assert.ok(c.ports.some((p) => p.name === 'metrics'));
    assert.match(c.image, /^REPLACE_ME\//, 'the image is a placeholder the operator replaces (documented in the file header)');
  });

  test('APF: the functions group gets its own Limited priority level that neither borrows nor lends', () => {
    const plc = find('PriorityLevelConfiguration', 'virt-reconciler-functions') as unknown as { spec: { type: string; limited: { lendablePercent: number; borrowingLimitPercent: number; limitResponse: { type: string } } } };
    assert.equal(plc.spec.type, 'Limited');
    assert.equal(plc.spec.limited.lendablePercent, 0);
    assert.equal(plc.spec.limited.borrowingLimitPercent, 0);
    assert.equal(plc.spec.limited.limitResponse.type, 'Queue');
    const fs = find('FlowSchema', 'virt-reconciler-functions') as unknown as { spec: { matchingPrecedence: number; priorityLevelConfiguration: { name: string }; rules: Array<{ subjects: Array<{ group: { name: string } }> }> } };
    assert.equal(fs.spec.priorityLevelConfiguration.name, 'virt-reconciler-functions');
    assert.ok(fs.spec.matchingPrecedence > 800 && fs.spec.matchingPrecedence < 9000, 'after the system schemas, before the catch-alls');
    assert.equal(fs.spec.rules[0]?.subjects[0]?.group.name, 'virt-reconciler:functions');
  });
});

describe('infra/kubernetes: applied to the sandbox API server', () => {
  let server: ApiServer;
  let api: KubernetesObjectApi;
  before(async () => {
    server = await startApiServer({ port: 0 });
    api = KubernetesObjectApi.makeApiClient(server.kubeConfig());
  });
  after(async () => {
    await server.close();
  });

  // The sandbox serves every kind used here (core, apps, rbac, flowcontrol); one test per object.
  for (const { file, obj } of manifests) {
    test(`${file}: ${obj.kind}/${obj.metadata.name} is created and reads back`, async () => {
      // act
      const created: KubernetesObject = await api.create(obj);
      const read: KubernetesObject = await api.read({ apiVersion: obj.apiVersion, kind: obj.kind, metadata: { name: obj.metadata.name, ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}) } });
      // assert
      assert.ok(created.metadata?.uid, 'the server assigned a uid');
      assert.equal(read.metadata?.uid, created.metadata?.uid);
      for (const field of ['spec', 'rules', 'roleRef', 'subjects', 'data'] as const) {
        if (obj[field] === undefined) continue;
        const got = (read as unknown as Record<string, unknown>)[field];
        // The server may add defaults; everything we wrote must come back.
        assert.deepEqual(pick(got, obj[field]), obj[field], `${field} round-trips`);
      }
    });
  }
});

/** The part of `got` that has the shape of `want` (server defaults dropped). */
function pick(got: unknown, want: unknown): unknown {
  if (Array.isArray(want)) return Array.isArray(got) ? want.map((w, i) => pick(got[i], w)) : got;
  if (want !== null && typeof want === 'object') {
    if (got === null || typeof got !== 'object') return got;
    return Object.fromEntries(Object.keys(want).map((k) => [k, pick((got as Record<string, unknown>)[k], (want as Record<string, unknown>)[k])]));
  }
  return got;
}
