import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import { controllerRbacFile, controllerRole, controllerUser } from '../../../sandbox/real/identities.ts';
import { CONTROLLERS, type Controller } from '../../../shared/controllers.ts';

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
    assert.ok(manifests.length >= 14, `found ${manifests.length} objects`);
    for (const { file, obj } of manifests) {
      assert.ok(obj.apiVersion && obj.kind && obj.metadata?.name, `${file}: ${JSON.stringify(obj).slice(0, 80)}`);
    }
  });

  test('relay RBAC: get/list/watch only, on exactly the watched resources; and virt-controller\'s Lease, which it holds for the cutover', () => {
    const all = find('ClusterRole', 'virt-reconciler-relay').rules as Rule[];
    const lease = all.filter((r) => r.apiGroups.includes('coordination.k8s.io'));
    assert.deepEqual(lease.map((r) => ({ apiGroups: r.apiGroups, resources: r.resources, verbs: [...r.verbs].sort() })), [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create', 'get', 'update'] }], 'the Lease: taken, renewed, released (docs/cutover.md)');
    const rules = all.filter((r) => !lease.includes(r));
    for (const r of rules) assert.deepEqual([...r.verbs].sort(), ['get', 'list', 'watch'], `relay must never write: ${JSON.stringify(r)}`);
    const granted = rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.map((res) => `${g}/${res}`))).sort();
    assert.deepEqual(granted, [
      '/namespaces',
      '/nodes',
      '/persistentvolumeclaims',
      '/pods',
      '/resourcequotas',
      '/services',
      'apps/controllerrevisions',
      'backup.kubevirt.io/virtualmachinebackups',
      'backup.kubevirt.io/virtualmachinebackuptrackers',
      'cdi.kubevirt.io/datavolumes',
      'clone.kubevirt.io/virtualmachineclones',
      'export.kubevirt.io/virtualmachineexports',
      'instancetype.kubevirt.io/virtualmachineclusterinstancetypes',
      'instancetype.kubevirt.io/virtualmachineclusterpreferences',
      'instancetype.kubevirt.io/virtualmachineinstancetypes',
      'instancetype.kubevirt.io/virtualmachinepreferences',
      'kubevirt.io/kubevirts',
      'kubevirt.io/virtualmachineinstancemigrations',
      'kubevirt.io/virtualmachineinstancereplicasets',
      'kubevirt.io/virtualmachineinstances',
      'kubevirt.io/virtualmachines',
      'migrations.kubevirt.io/migrationpolicies',
      'networking.k8s.io/ingresses',
      'policy/poddisruptionbudgets',
      'pool.kubevirt.io/virtualmachinepools',
      'snapshot.kubevirt.io/virtualmachinerestores',
      'snapshot.kubevirt.io/virtualmachinesnapshotcontents',
      'snapshot.kubevirt.io/virtualmachinesnapshots',
      'snapshot.storage.k8s.io/volumesnapshotclasses',
      'snapshot.storage.k8s.io/volumesnapshots',
    ]);
    const binding = find('ClusterRoleBinding', 'virt-reconciler-relay') as unknown as { subjects: Array<{ kind: string; name: string; namespace: string }> };
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'virt-reconciler-relay', namespace: 'virt-reconciler' }]);
  });

  // One ClusterRole per registered controller (shared/controllers.ts), holding exactly what its
  // KubeClient calls (functions/*/deps.ts); keyed by Controller so a new registry entry needs its rules here.
  const CONTROLLER_RULES: Record<Controller, string[]> = {
    vmi: [
      '/configmaps get',
      '/events create',
      '/namespaces get',
      '/nodes list',
      '/persistentvolumeclaims create,delete,get,list',
      '/pods create,delete,list,patch',
      '/pods/status patch',
      '/resourcequotas list',
      'cdi.kubevirt.io/datavolumes get',
      'cdi.kubevirt.io/storageprofiles list',
      'k8s.cni.cncf.io/network-attachment-definitions get',
      'kubevirt.io/kubevirts list',
      'kubevirt.io/virtualmachineinstancemigrations list',
      'kubevirt.io/virtualmachineinstances get,list,patch,update',
      'kubevirt.io/virtualmachines get',
      'storage.k8s.io/storageclasses list',
    ],
    vm: [
      '/events create',
      '/namespaces get',
      '/persistentvolumeclaims get,patch',
      'apps/controllerrevisions create,delete,get',
      'authorization.k8s.io/subjectaccessreviews create',
      'cdi.kubevirt.io/datasources get',
      'cdi.kubevirt.io/datavolumes create,get',
      'instancetype.kubevirt.io/virtualmachineclusterinstancetypes get',
      'instancetype.kubevirt.io/virtualmachineclusterpreferences get',
      'instancetype.kubevirt.io/virtualmachineinstancetypes get',
      'instancetype.kubevirt.io/virtualmachinepreferences get',
      'kubevirt.io/kubevirts list',
      'kubevirt.io/virtualmachineinstances create,delete,get,patch',
      'kubevirt.io/virtualmachines get,patch',
      'kubevirt.io/virtualmachines/status patch',
    ],
    migration: [
      '/configmaps get',
      '/events create',
      '/namespaces get',
      '/nodes get,list',
      '/persistentvolumeclaims create,delete,get,list,patch',
      '/pods create,delete,list,patch',
      '/resourcequotas list',
      'batch/jobs create,delete,get',
      'cdi.kubevirt.io/storageprofiles list',
      'k8s.cni.cncf.io/network-attachment-definitions get',
      'kubevirt.io/kubevirts list',
      'kubevirt.io/virtualmachineinstancemigrations delete,get,list,update',
      'kubevirt.io/virtualmachineinstancemigrations/status update',
      'kubevirt.io/virtualmachineinstances get,patch',
      'migrations.kubevirt.io/migrationpolicies list',
      'storage.k8s.io/storageclasses list',
      'subresources.kubevirt.io/virtualmachineinstances/backup update',
    ],
    pool: [
      '/events create',
      '/persistentvolumeclaims get,patch',
      'apps/controllerrevisions create,delete,list',
      'cdi.kubevirt.io/datavolumes get,patch',
      'kubevirt.io/virtualmachineinstances delete,list,patch',
      'kubevirt.io/virtualmachines create,delete,get,list,patch,update',
      'pool.kubevirt.io/virtualmachinepools get,patch',
      'pool.kubevirt.io/virtualmachinepools/status update',
    ],
    replicaset: [
      '/events create',
      'kubevirt.io/virtualmachineinstancereplicasets get,update',
      'kubevirt.io/virtualmachineinstancereplicasets/status update',
      'kubevirt.io/virtualmachineinstances create,delete,list,patch',
    ],
    node: [
      '/events create',
      '/nodes get,list,patch',
      '/pods list',
      'apps/daemonsets list',
      'kubevirt.io/kubevirts list',
      'kubevirt.io/virtualmachineinstances list,patch',
    ],
    evacuation: [
      '/events create',
      '/nodes get',
      '/pods list',
      'kubevirt.io/kubevirts list',
      'kubevirt.io/virtualmachineinstancemigrations create,list',
      'kubevirt.io/virtualmachineinstances list',
    ],
    'disruption-budget': [
      '/events create',
      'kubevirt.io/virtualmachineinstances get',
      'policy/poddisruptionbudgets delete,list',
    ],
    'workload-updater': [
      '/events create',
      '/pods list',
      '/pods/eviction create',
      'kubevirt.io/kubevirts get,list',
      'kubevirt.io/kubevirts/status patch',
      'kubevirt.io/virtualmachineinstancemigrations create,delete,list',
      'kubevirt.io/virtualmachineinstances list',
    ],
    export: [
      '/configmaps create,get',
      '/events create',
      '/persistentvolumeclaims create,get,list',
      '/pods create,delete,get,list',
      '/secrets create,get',
      '/services create,get',
      'apps/controllerrevisions get',
      'backup.kubevirt.io/virtualmachinebackups get',
      'backup.kubevirt.io/virtualmachinebackuptrackers get',
      'cdi.kubevirt.io/datavolumes get',
      'export.kubevirt.io/virtualmachineexports delete,get',
      'export.kubevirt.io/virtualmachineexports/status update',
      'instancetype.kubevirt.io/virtualmachineclusterinstancetypes get',
      'instancetype.kubevirt.io/virtualmachineclusterpreferences get',
      'instancetype.kubevirt.io/virtualmachineinstancetypes get',
      'instancetype.kubevirt.io/virtualmachinepreferences get',
      'kubevirt.io/kubevirts list',
      'kubevirt.io/virtualmachineinstances get',
      'kubevirt.io/virtualmachines get',
      'networking.k8s.io/ingresses list',
      'route.openshift.io/routes list',
      'snapshot.kubevirt.io/virtualmachinesnapshotcontents get',
      'snapshot.kubevirt.io/virtualmachinesnapshots get',
      'snapshot.storage.k8s.io/volumesnapshots get',
    ],
    snapshot: [
      '/events create',
      '/persistentvolumeclaims get,list',
      '/pods list',
      'apps/controllerrevisions create,get',
      'cdi.kubevirt.io/datavolumes get',
      'cdi.kubevirt.io/storageprofiles get',
      'kubevirt.io/virtualmachineinstances get',
      'kubevirt.io/virtualmachines get,patch',
      'kubevirt.io/virtualmachines/status patch',
      'snapshot.kubevirt.io/virtualmachinesnapshotcontents create,delete,get,list,patch',
      'snapshot.kubevirt.io/virtualmachinesnapshotcontents/status update',
      'snapshot.kubevirt.io/virtualmachinesnapshots get,patch',
      'snapshot.kubevirt.io/virtualmachinesnapshots/status update',
      'snapshot.storage.k8s.io/volumesnapshotclasses list',
      'snapshot.storage.k8s.io/volumesnapshots create,get',
      'storage.k8s.io/storageclasses get',
      'subresources.kubevirt.io/virtualmachineinstances/freeze update',
      'subresources.kubevirt.io/virtualmachineinstances/unfreeze update',
    ],
    restore: [
      '/events create',
      '/persistentvolumeclaims create,delete,get,list,update',
      'apps/controllerrevisions create,get,patch',
      'cdi.kubevirt.io/datavolumes create,delete,get,patch',
      'kubevirt.io/virtualmachineinstances get',
      'kubevirt.io/virtualmachines create,get,update',
      'kubevirt.io/virtualmachines/status patch',
      'snapshot.kubevirt.io/virtualmachinerestores get,patch,update',
      'snapshot.kubevirt.io/virtualmachinerestores/status update',
      'snapshot.kubevirt.io/virtualmachinesnapshotcontents get',
      'snapshot.kubevirt.io/virtualmachinesnapshots get',
      'snapshot.storage.k8s.io/volumesnapshots get',
      'storage.k8s.io/storageclasses get',
      'subresources.kubevirt.io/virtualmachines/stop update',
    ],
    backup: [
      '/events create',
      '/persistentvolumeclaims get',
      'backup.kubevirt.io/virtualmachinebackups get,patch',
      'backup.kubevirt.io/virtualmachinebackups/status update',
      'backup.kubevirt.io/virtualmachinebackuptrackers get',
      'backup.kubevirt.io/virtualmachinebackuptrackers/status patch',
      'export.kubevirt.io/virtualmachineexports delete,get',
      'kubevirt.io/virtualmachineinstances get,patch',
      'kubevirt.io/virtualmachines get',
      'subresources.kubevirt.io/virtualmachineinstances/backup update',
      'subresources.kubevirt.io/virtualmachineinstances/redefine-checkpoint update',
    ],
    clone: [
      '/events create',
      '/persistentvolumeclaims get',
      'clone.kubevirt.io/virtualmachineclones delete,get',
      'clone.kubevirt.io/virtualmachineclones/status update',
      'kubevirt.io/virtualmachines get',
      'snapshot.kubevirt.io/virtualmachinerestores create,delete,get',
      'snapshot.kubevirt.io/virtualmachinesnapshotcontents get',
      'snapshot.kubevirt.io/virtualmachinesnapshots create,delete,get',
    ],
  };
  for (const controller of CONTROLLERS) {
    const expected = CONTROLLER_RULES[controller];
    test(`${controller} controller RBAC: its own ClusterRole in ${controllerRbacFile(controller)} with exactly the verbs it uses, bound to user ${controllerUser(controller)}`, () => {
      const role = manifests.find((m) => m.obj.kind === 'ClusterRole' && m.obj.metadata.name === controllerRole(controller));
      assert.equal(role?.file, controllerRbacFile(controller), 'one file per registered controller');
      const rules = find('ClusterRole', controllerRole(controller)).rules as Rule[];
      const granted = new Map<string, Set<string>>();
      for (const r of rules) {
        assert.ok(![...r.verbs, ...r.resources, ...r.apiGroups].includes('*'), `wildcard in ${JSON.stringify(r)}`);
        assert.ok(!r.verbs.includes('watch'), 'functions do not watch (the relay does)');
        for (const g of r.apiGroups) for (const res of r.resources) for (const v of r.verbs) granted.set(`${g}/${res}`, (granted.get(`${g}/${res}`) ?? new Set()).add(v));
      }
      const got = [...granted].map(([k, v]) => `${k} ${[...v].sort().join(',')}`).sort();
      // Every controller reads virt-controller's Lease: the cutover's fence (docs/cutover.md).
      assert.deepEqual(got, [...expected, 'coordination.k8s.io/leases get'].sort());
      const binding = find('ClusterRoleBinding', controllerRole(controller)) as unknown as { roleRef: { name: string }; subjects: Array<{ kind: string; name: string }> };
      assert.equal(binding.roleRef.name, controllerRole(controller));
      assert.deepEqual(binding.subjects.map((s) => `${s.kind}:${s.name}`), [`User:${controllerUser(controller)}`], 'the user the EKS access entry maps the Lambda role to');
    });
  }

  // The controllers whose writes virt-api judges by identity (VMI creates/updates/patches,
  // migration creates: shared/kube/kubevirt-identity.ts) send them as KubeVirt's controller.
  const IMPERSONATING: readonly Controller[] = ['backup', 'evacuation', 'migration', 'node', 'pool', 'replicaset', 'vm', 'vmi', 'workload-updater'];
  for (const controller of CONTROLLERS) {
    const impersonates = IMPERSONATING.includes(controller);
    test(`${controller} controller: ${impersonates ? 'may impersonate kubevirt-controller in kubevirt, nothing else' : 'impersonates no one'}`, () => {
      const roles = manifests.filter((m) => m.obj.kind === 'Role' && m.obj.metadata.name === controllerRole(controller));
      const anyImpersonation = manifests.filter((m) => ['Role', 'ClusterRole'].includes(m.obj.kind) && ((m.obj.rules ?? []) as Rule[]).some((r) => r.verbs.includes('impersonate')));
      assert.ok(anyImpersonation.every((m) => m.obj.kind === 'Role'), 'never cluster-wide: a ClusterRole would allow kubevirt-controller of every namespace');
      if (!impersonates) return assert.equal(roles.length, 0);
      assert.equal(roles.length, 1);
      assert.equal(roles[0]!.file, controllerRbacFile(controller));
      assert.equal(roles[0]!.obj.metadata.namespace, 'kubevirt');
      assert.deepEqual(roles[0]!.obj.rules, [{ apiGroups: [''], resources: ['serviceaccounts'], resourceNames: ['kubevirt-controller'], verbs: ['impersonate'] }]);
      const binding = manifests.find((m) => m.obj.kind === 'RoleBinding' && m.obj.metadata.name === controllerRole(controller))?.obj as unknown as { metadata: { namespace: string }; roleRef: { kind: string; name: string }; subjects: Array<{ kind: string; name: string }> };
      assert.equal(binding.metadata.namespace, 'kubevirt');
      assert.deepEqual(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: controllerRole(controller) });
      assert.deepEqual(binding.subjects.map((s) => `${s.kind}:${s.name}`), [`User:${controllerUser(controller)}`]);
    });
  }

  test('no controller RBAC file without a registered controller', () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith('-controller-rbac.yaml')).sort();
    assert.deepEqual(files, CONTROLLERS.map(controllerRbacFile).sort());
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
