/**
 * The Helm chart (infra/helm/virt-reconciler/) with the upstream Helm CLI (built from the Go module
 * proxy by npm test's prerequisites, infra/helm/cli.ts): `helm lint`, the per-controller RBAC
 * equal to what the registry's controllers demand, infra/kubernetes/ equal to the chart's output
 * (one source), and what each value renders — or refuses, in one line. Skips, saying so, where
 * Helm cannot be built (no Go toolchain). The real lane installs it: real-lane.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { controllerRules } from '../../../infra/helm/controller-rules.ts';
import { helm, helmPath, missingHelmToolchain } from '../../../infra/helm/cli.ts';
import { CHART_DIR, CONTROLLERS_JSON, controllersData, KUBERNETES_DIR, RELEASE, renderKubernetes, type ControllerEntry } from '../../../scripts/gen-kubernetes.ts';
import { controllerRole, controllerUser } from '../../../sandbox/real/identities.ts';
import { CONTROLLERS } from '../../../shared/controllers.ts';

const noHelm = existsSync(helmPath()) ? false : (missingHelmToolchain() ?? false);

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [k: string]: unknown;
}

/** `helm template` of the chart with these flags: the objects, or Helm's error. */
async function render(...flags: string[]): Promise<{ objects: Obj[]; error: string }> {
  const r = await helm(['template', RELEASE.name, CHART_DIR, '--namespace', RELEASE.namespace, ...flags]);
  if (r.status !== 0) return { objects: [], error: r.stderr.trim() };
  const objects = parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj | null).filter((o): o is Obj => o !== null);
  return { objects, error: '' };
}

const one = (objects: Obj[], kind: string, name: string): Obj => {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  assert.ok(o, `${kind}/${name} is rendered`);
  return o;
};

const relayEnv = (objects: Obj[]): Record<string, string> => one(objects, 'ConfigMap', 'virt-reconciler-relay').data as Record<string, string>;

describe('the Helm chart: per-controller RBAC from the registry (no Helm needed)', () => {
  test('files/controllers.json lists every controller of the registry, in its order, with the rules it demands', () => {
    // arrange
    const committed = JSON.parse(readFileSync(CONTROLLERS_JSON, 'utf8')) as { controllers: ControllerEntry[] };
    // assert
    assert.deepEqual(
      committed.controllers.map((c) => c.name),
      [...CONTROLLERS],
      'one entry per controller of shared/controllers.ts (else: npm run gen:kubernetes)',
    );
    for (const c of CONTROLLERS) {
      const entry = committed.controllers.find((e) => e.name === c)!;
      assert.deepEqual(entry.rules, controllerRules(c), `${c}: the chart's rules are controllerRules(${c}) (else: npm run gen:kubernetes)`);
      assert.equal(entry.role, controllerRole(c), `${c}: the ClusterRole sandbox/real/identities.ts expects`);
      assert.equal(entry.user, controllerUser(c), `${c}: the user the EKS access entry maps the Lambda role to`);
    }
    assert.deepEqual(committed, controllersData(), 'the whole file is what the generator writes');
  });
});

describe('the Helm chart with the upstream Helm CLI', { skip: noHelm }, () => {
  test('helm lint --strict passes', async () => {
    // act
    const r = await helm(['lint', '--strict', CHART_DIR]);
    // assert
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  test('each rendered controller ClusterRole is exactly controllerRules(controller), bound to its user', async () => {
    // act
    const { objects, error } = await render();
    // assert
    assert.equal(error, '');
    for (const c of CONTROLLERS) {
      assert.deepEqual(one(objects, 'ClusterRole', controllerRole(c)).rules, controllerRules(c), c);
      const binding = one(objects, 'ClusterRoleBinding', controllerRole(c)) as unknown as { roleRef: { name: string }; subjects: { kind: string; name: string }[] };
      assert.equal(binding.roleRef.name, controllerRole(c));
      assert.deepEqual(binding.subjects.map((s) => `${s.kind}:${s.name}`), [`User:${controllerUser(c)}`]);
    }
    const controllerRoles = objects.filter((o) => o.kind === 'ClusterRole' && o.metadata.name !== 'virt-reconciler-relay');
    assert.equal(controllerRoles.length, CONTROLLERS.length, 'no role for a controller the registry does not have');
  });

  test('infra/kubernetes/ is the chart\'s output, file by file (npm run gen:kubernetes)', async () => {
    // act
    const want = await renderKubernetes();
    const have = readdirSync(KUBERNETES_DIR).filter((f) => f.endsWith('.yaml')).sort();
    // assert
    assert.deepEqual(have, [...want.keys()].sort(), 'the same files');
    for (const [file, content] of want) assert.equal(readFileSync(join(KUBERNETES_DIR, file), 'utf8'), content, `${file} differs from the chart's output: run npm run gen:kubernetes`);
  });

  test('defaults: the relay, its Service (probes, metrics), RBAC and APF; no ServiceMonitor, no Namespace; mode normal', async () => {
    // act
    const { objects, error } = await render();
    // assert
    assert.equal(error, '');
    const kinds = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    for (const k of ['ServiceAccount/virt-reconciler-relay', 'ConfigMap/virt-reconciler-relay', 'Deployment/virt-reconciler-relay', 'Service/virt-reconciler-relay', 'PriorityLevelConfiguration/virt-reconciler-functions', 'FlowSchema/virt-reconciler-functions']) {
      assert.ok(kinds.includes(k), `${k} is rendered`);
    }
    assert.ok(!objects.some((o) => o.kind === 'ServiceMonitor'), 'the ServiceMonitor only when enabled');
    assert.ok(!objects.some((o) => o.kind === 'Namespace'), 'helm install --create-namespace makes it');
    const service = one(objects, 'Service', 'virt-reconciler-relay') as unknown as { spec: { ports: { name: string; port: number }[] } };
    assert.deepEqual(service.spec.ports.map((p) => `${p.name}:${p.port}`), ['health:8080', 'metrics:9090']);
    assert.equal(relayEnv(objects).VR_MODE, 'normal');
    // The controllers' impersonation Roles live where the account they allow is: KubeVirt's namespace.
    const inKubeVirt = (o: Obj) => (o.kind === 'Role' || o.kind === 'RoleBinding') && o.metadata.namespace === 'kubevirt';
    assert.ok(objects.some(inKubeVirt), "the impersonation Roles are rendered in KubeVirt's namespace");
    for (const o of objects) if (o.metadata.namespace !== undefined && !inKubeVirt(o)) assert.equal(o.metadata.namespace, RELEASE.namespace, `${o.kind}/${o.metadata.name} in the release's namespace`);
  });

  // Each value, what it renders: a table of flags and checks on the objects.
  const cases: { name: string; flags: string[]; check: (objects: Obj[]) => void }[] = [
    { name: 'mode=shadow reaches the relay as VR_MODE (the cutover, docs/cutover.md)', flags: ['--set', 'mode=shadow'], check: (o) => assert.equal(relayEnv(o).VR_MODE, 'shadow') },
    {
      name: "shadow.queueUrl and shadow.stateTable reach the relay in shadow mode only (it judges the functions' decisions)",
      flags: ['--set', 'mode=shadow', '--set', 'shadow.queueUrl=https://sqs.example/1/vr-shadow.fifo', '--set', 'shadow.stateTable=vr-state'],
      check: (o) => assert.deepEqual([relayEnv(o).SHADOW_QUEUE_URL, relayEnv(o).STATE_TABLE_NAME], ['https://sqs.example/1/vr-shadow.fifo', 'vr-state']),
    },
    {
      name: 'shadow.* without mode=shadow renders nothing',
      flags: ['--set', 'shadow.queueUrl=https://sqs.example/1/vr-shadow.fifo', '--set', 'shadow.stateTable=vr-state'],
      check: (o) => assert.deepEqual([relayEnv(o).SHADOW_QUEUE_URL, relayEnv(o).STATE_TABLE_NAME], [undefined, undefined]),
    },
    { name: 'the Lease identity and KubeVirt namespace reach the relay', flags: ['--set', 'leaseIdentity=vr-prod', '--set', 'kubevirtNamespace=kubevirt-system'], check: (o) => assert.deepEqual([relayEnv(o).VR_LEASE_IDENTITY, relayEnv(o).KUBEVIRT_NAMESPACE], ['vr-prod', 'kubevirt-system']) },
    {
      name: "kubevirtNamespace: the controllers' impersonation Roles and bindings move to KubeVirt's namespace",
      flags: ['--set', 'kubevirtNamespace=kv-system'],
      check: (o) => {
        const roles = o.filter((x) => x.kind === 'Role' || x.kind === 'RoleBinding');
        assert.ok(roles.length > 0);
        for (const r of roles) assert.equal(r.metadata.namespace, 'kv-system', `${r.kind}/${r.metadata.name}`);
      },
    },
    { name: 'clusterId reaches the relay as CLUSTER_ID', flags: ['--set', 'clusterId=prod-eu-1'], check: (o) => assert.equal(relayEnv(o).CLUSTER_ID, 'prod-eu-1') },
    {
      name: 'queue URLs per controller, the region',
      flags: ['--set', 'queues.urls.vmi=https://sqs.eu-west-1.amazonaws.com/1/virt-reconciler-vmi.fifo', '--set', 'queues.urls.disruption-budget=https://q/db.fifo', '--set', 'queues.region=eu-west-1'],
      check: (o) => {
        const env = relayEnv(o);
        assert.equal(env.QUEUE_URL_VMI, 'https://sqs.eu-west-1.amazonaws.com/1/virt-reconciler-vmi.fifo');
        assert.equal(env['QUEUE_URL_DISRUPTION-BUDGET'], 'https://q/db.fifo', 'the name functions/relay/main.ts reads');
        assert.equal(env.AWS_REGION, 'eu-west-1');
        assert.equal(env.AWS_ENDPOINT_URL_SQS, undefined);
      },
    },
    {
      name: 'local queues: the endpoint of an SQS-compatible server and its static credentials',
      flags: ['--set', 'queues.mode=local', '--set', 'queues.endpoint=http://fauxqs.virt-reconciler:4566'],
      check: (o) => {
        const env = relayEnv(o);
        assert.equal(env.AWS_ENDPOINT_URL_SQS, 'http://fauxqs.virt-reconciler:4566');
        assert.equal(env.AWS_ACCESS_KEY_ID, 'local');
        assert.equal(env.AWS_REGION, 'us-east-1', 'a region the SDK needs, any will do');
      },
    },
    {
      name: 'image, replicas and resources of the relay',
      flags: ['--set', 'relay.image.repository=123.dkr.ecr.us-east-1.amazonaws.com/relay', '--set', 'relay.image.tag=v1', '--set', 'relay.replicas=3', '--set', 'relay.resources.limits.memory=1Gi'],
      check: (o) => {
        const d = one(o, 'Deployment', 'virt-reconciler-relay') as unknown as { spec: { replicas: number; template: { spec: { containers: { image: string; resources: { limits: { memory: string } } }[] } } } };
        assert.equal(d.spec.replicas, 3);
        assert.equal(d.spec.template.spec.containers[0]!.image, '123.dkr.ecr.us-east-1.amazonaws.com/relay:v1');
        assert.equal(d.spec.template.spec.containers[0]!.resources.limits.memory, '1Gi');
      },
    },
    {
      name: 'the metrics ServiceMonitor when enabled, on the Service\'s metrics port',
      flags: ['--set', 'metrics.serviceMonitor.enabled=true', '--set', 'metrics.serviceMonitor.labels.release=prometheus'],
      check: (o) => {
        const sm = one(o, 'ServiceMonitor', 'virt-reconciler-relay') as unknown as { metadata: { labels: Record<string, string> }; spec: { endpoints: { port: string; path: string }[] } };
        assert.deepEqual(sm.spec.endpoints.map((e) => `${e.port} ${e.path}`), ['metrics /metrics']);
        assert.equal(sm.metadata.labels.release, 'prometheus');
      },
    },
    { name: 'flowControl.enabled=false renders no APF objects', flags: ['--set', 'flowControl.enabled=false'], check: (o) => assert.ok(!o.some((x) => x.apiVersion.startsWith('flowcontrol.'))) },
  ];
  for (const c of cases) {
    test(`values: ${c.name}`, async () => {
      // act
      const { objects, error } = await render(...c.flags);
      // assert
      assert.equal(error, '', 'renders');
      c.check(objects);
    });
  }

  test('a changed ConfigMap value changes the relay pod template\'s checksum, so helm upgrade rolls it', async () => {
    // act
    const normal = await render();
    const shadow = await render('--set', 'mode=shadow');
    // assert
    const checksum = (o: Obj[]) => (one(o, 'Deployment', 'virt-reconciler-relay') as unknown as { spec: { template: { metadata: { annotations: Record<string, string> } } } }).spec.template.metadata.annotations['checksum/config'];
    assert.ok(checksum(normal.objects));
    assert.notEqual(checksum(normal.objects), checksum(shadow.objects));
  });

  // Bad values: Helm's error names the value and what it may be; nothing is rendered.
  const refused: { name: string; flags: string[]; message: RegExp }[] = [
    { name: 'a mode that does not exist', flags: ['--set', 'mode=cutover'], message: /at '\/mode': value must be one of 'normal', 'shadow'/ },
    { name: 'a queue URL for a controller that does not exist', flags: ['--set', 'queues.urls.vmis=https://q'], message: /queues\.urls\.vmis: no such controller/ },
    { name: 'local queues without their endpoint', flags: ['--set', 'queues.mode=local'], message: /queues\.endpoint: queues\.mode is local/ },
    { name: 'a queue mode that does not exist', flags: ['--set', 'queues.mode=kafka'], message: /at '\/queues\/mode': value must be one of 'aws', 'local'/ },
  ];
  for (const r of refused) {
    test(`refused: ${r.name}`, async () => {
      // act
      const { objects, error } = await render(...r.flags);
      // assert
      assert.equal(objects.length, 0);
      assert.match(error, r.message);
    });
  }

  test('the CRDs it needs when absent: CDI\'s and the CSI snapshotter\'s that the relay and the controllers read, as in infra/crds/', async () => {
    // act
    const { objects, error } = await render('--include-crds');
    // assert
    assert.equal(error, '');
    const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata.name).sort();
    assert.deepEqual(crds, [
      'datasources.cdi.kubevirt.io',
      'datavolumes.cdi.kubevirt.io',
      'storageprofiles.cdi.kubevirt.io',
      'volumesnapshotclasses.snapshot.storage.k8s.io',
      'volumesnapshotcontents.snapshot.storage.k8s.io',
      'volumesnapshots.snapshot.storage.k8s.io',
    ]);
    const upstream = parseAllDocuments(readFileSync(join(CHART_DIR, '..', '..', 'crds', 'cdi', 'datavolumes.cdi.kubevirt.io.yaml'), 'utf8'))[0]!.toJS() as Obj;
    assert.deepEqual(one(objects, 'CustomResourceDefinition', 'datavolumes.cdi.kubevirt.io'), upstream, 'the one copy in infra/crds/ (a link, not a second copy)');
  });
});
