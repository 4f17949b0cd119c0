/**
 * The Helm chart on the real control plane (npm run test:real; skipped, saying so, on the emulator
 * lane): a sandbox whose product RBAC is NOT applied at start, so every permission the product
 * has comes from the chart. `helm template`'s output passes a server-side dry run (and the dry run
 * creates nothing); `helm install` creates it for real; the chart's identities (the relay's
 * ServiceAccount, each controller's user) may do exactly what their rules say; the runtime under
 * those identities, and `virt-reconciler up --kubeconfig`, reconcile a VMI; `helm upgrade`
 * changes the cutover mode; `helm uninstall` takes it all away.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AuthorizationV1Api, CoreV1Api, KubernetesObjectApi, PatchStrategy, RbacAuthorizationV1Api, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { helm, helmPath, missingHelmToolchain } from '../../../infra/helm/cli.ts';
import { controllerRules } from '../../../infra/helm/controller-rules.ts';
import { onRealControlPlane } from '../../../sandbox/real/control-plane.ts';
import { controllerRole, controllerUser, IDENTITIES } from '../../../sandbox/real/identities.ts';
import { startSandbox, type Sandbox } from '../../../sandbox/sandbox.ts';
import { CHART_DIR, RELEASE } from '../../../scripts/gen-kubernetes.ts';
import { VMIS } from '../../../shared/api/index.ts';
import { CONTROLLERS } from '../../../shared/controllers.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { HANDED_OFF, newRuntime, NS, until, vmiManifest } from '../../e2e/support.ts';
import { projectRoot } from '../../support/reference.ts';

const skip = !onRealControlPlane()
  ? "the real control plane only (npm run test:real): the chart is installed with server-side apply and checked by the API server's own RBAC"
  : existsSync(helmPath())
    ? false
    : (missingHelmToolchain() ?? false);

/** The relay's ServiceAccount as the API server names it. */
const RELAY_USER = IDENTITIES.relay!.user;

describe('the Helm chart on the real control plane', { skip }, () => {
  let sandbox: Sandbox;
  let dir: string;
  let adminKubeconfig: string;
  let test$: KubeClient;

  /** Helm against this cluster, as admin. */
  const helmHere = (...args: string[]) => helm([...args, '--kubeconfig', adminKubeconfig]);

  before(async () => {
    // No product RBAC at start: the chart is the only source of the product's permissions.
    sandbox = await startSandbox({ nodes: 2, controlPlane: 'real', productRbac: false, timings: { podStartupMs: 50, vmiBootMs: 50 } });
    dir = await mkdtemp(join(tmpdir(), 'vr-helm-'));
    adminKubeconfig = await sandbox.apiServer.writeKubeconfig(join(dir, 'admin.kubeconfig'), 'admin');
    test$ = createKubeClient(sandbox.apiServer.kubeConfig('test'));
  });
  after(async () => {
    await sandbox?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** May `user` do `verb` on `group/resource[/subresource]`? The API server's own answer. */
  async function allowed(user: string, verb: string, group: string, resource: string): Promise<boolean> {
    const [res, sub] = resource.split('/');
    const authz = sandbox.apiServer.kubeConfig('admin').makeApiClient(AuthorizationV1Api);
    const review = await authz.createSubjectAccessReview({
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, resourceAttributes: { verb, group, resource: res!, ...(sub ? { subresource: sub } : {}), namespace: NS } } },
    });
    return review.status?.allowed === true;
  }

  test('before the chart: the product identities may do nothing (the lane applied no product RBAC)', async () => {
    // act
    const vmi = await allowed(controllerUser('vmi'), 'create', '', 'pods');
    const relay = await allowed(RELAY_USER, 'watch', 'kubevirt.io', 'virtualmachineinstances');
    // assert
    assert.equal(vmi, false);
    assert.equal(relay, false);
  });

  test('helm template: every object passes a server-side dry run, and the dry run creates nothing', async () => {
    // arrange: the chart's output as infra/kubernetes/ holds it (its Namespace included)
    const r = await helm(['template', RELEASE.name, CHART_DIR, '--namespace', RELEASE.namespace, '--set', 'namespace.create=true']);
    assert.equal(r.status, 0, r.stderr);
    const objects = parseAllDocuments(r.stdout).map((d) => d.toJS() as KubernetesObject | null).filter((o): o is KubernetesObject => o !== null);
    const api = KubernetesObjectApi.makeApiClient(sandbox.apiServer.kubeConfig('admin'));
    // A namespaced object's dry run needs its namespace to exist: that one is created for real.
    const ns = objects.find((o) => o.kind === 'Namespace')!;
    await api.patch(ns, undefined, undefined, 'virt-reconciler-test', true, PatchStrategy.ServerSideApply);
    // act
    const refused: string[] = [];
    for (const obj of objects.filter((o) => o !== ns)) {
      try {
        await api.patch(obj, undefined, 'All', 'virt-reconciler-test', true, PatchStrategy.ServerSideApply);
      } catch (err) {
        refused.push(`${obj.kind}/${obj.metadata?.name}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
      }
    }
    const rbac = sandbox.apiServer.kubeConfig('admin').makeApiClient(RbacAuthorizationV1Api);
    const created = await rbac.readClusterRole({ name: controllerRole('vmi') }).then(
      () => true,
      (err: { code?: number }) => (err.code === 404 ? false : Promise.reject(err)),
    );
    // assert
    assert.deepEqual(refused, [], 'the API server accepts every object');
    assert.ok(objects.length >= 2 * CONTROLLERS.length + 8, `${objects.length} objects`);
    assert.equal(created, false, 'a dry run creates nothing');
  });

  test('helm install: the release is deployed, its objects are created and owned by it', async () => {
    // act
    const install = await helmHere('install', RELEASE.name, CHART_DIR, '--namespace', RELEASE.namespace, '--create-namespace');
    const status = await helmHere('status', RELEASE.name, '--namespace', RELEASE.namespace, '-o', 'json');
    const rbac = sandbox.apiServer.kubeConfig('admin').makeApiClient(RbacAuthorizationV1Api);
    const role = await rbac.readClusterRole({ name: controllerRole('migration') });
    const service = await sandbox.apiServer.kubeConfig('admin').makeApiClient(CoreV1Api).readNamespacedService({ name: 'virt-reconciler-relay', namespace: RELEASE.namespace });
    // assert
    assert.equal(install.status, 0, install.stderr);
    assert.equal((JSON.parse(status.stdout) as { info: { status: string } }).info.status, 'deployed');
    assert.equal(role.metadata?.annotations?.['meta.helm.sh/release-name'], RELEASE.name, 'owned by the release');
    assert.deepEqual(role.rules?.map((r) => ({ apiGroups: r.apiGroups, resources: r.resources, verbs: r.verbs })), controllerRules('migration'));
    assert.deepEqual(service.spec?.ports?.map((p) => p.name), ['health', 'metrics']);
  });

  test("the chart's identities: each controller's user may do exactly its rules' verbs, the relay's ServiceAccount only read", async () => {
    // arrange: every (verb, resource) of every controller's rules, and a write none of them has
    const checks: { user: string; verb: string; group: string; resource: string; want: boolean }[] = [];
    for (const c of CONTROLLERS) {
      for (const rule of controllerRules(c)) for (const group of rule.apiGroups) for (const resource of rule.resources) for (const verb of rule.verbs) checks.push({ user: controllerUser(c), verb, group, resource, want: true });
      checks.push({ user: controllerUser(c), verb: 'delete', group: '', resource: 'nodes', want: false });
    }
    for (const resource of ['virtualmachineinstances', 'virtualmachines']) checks.push({ user: RELAY_USER, verb: 'watch', group: 'kubevirt.io', resource, want: true });
    checks.push({ user: RELAY_USER, verb: 'create', group: '', resource: 'pods', want: false }, { user: RELAY_USER, verb: 'update', group: 'kubevirt.io', resource: 'virtualmachineinstances', want: false });
    // act
    const wrong: string[] = [];
    for (const c of checks) if ((await allowed(c.user, c.verb, c.group, c.resource)) !== c.want) wrong.push(`${c.user} ${c.verb} ${c.group}/${c.resource}: want ${c.want ? 'allowed' : 'denied'}`);
    // assert
    assert.deepEqual(wrong, [], `${checks.length} checks`);
  });

  test("the runtime under the chart's identities (the relay's ServiceAccount, each controller's user) runs a VMI", async () => {
    // arrange: on this lane newRuntime gives each part its own identity (sandbox/real/identities.ts)
    const problems: string[] = [];
    const rt = newRuntime(sandbox, problems);
    rt.start();
    try {
      // act
      await test$.create(VMIS, vmiManifest('helm-parts'));
      await until('the VMI is Running', async () => (await test$.get(VMIS, NS, 'helm-parts'))?.status?.phase === 'Running', { problems, tries: 6000 });
      // assert: no call of the runtime was refused
      assert.deepEqual(problems.filter((p) => /forbidden|403/i.test(p)), [], 'no 403');
    } finally {
      await rt.stop();
    }
  });

  test('virt-reconciler up --kubeconfig reconciles a VMI with the roles the chart installed, then stops cleanly', async () => {
    // arrange: the all-in-one identity, whose group the lane binds to the product roles by name:
    // roles only the chart has created on this cluster.
    const kubeconfig = await sandbox.apiServer.writeKubeconfig(join(dir, 'runtime.kubeconfig'), 'virt-reconciler');
    const child = spawn(process.execPath, ['bin/virt-reconciler.js', 'up', '--kubeconfig', kubeconfig, '--no-dashboard', '--log-stderr', '--data-dir', join(dir, 'data')], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr = (stderr + b.toString()).slice(-20_000)));
    const exited = once(child, 'exit') as Promise<[number | null]>;
    try {
      // act
      await test$.create(VMIS, vmiManifest('helm-up'));
      await until('up hands the VMI off', async () => HANDED_OFF.has((await test$.get(VMIS, NS, 'helm-up'))?.status?.phase ?? ''), { tries: 6000 });
    } finally {
      child.kill('SIGINT');
    }
    const [code] = await exited;
    // assert
    assert.equal(code, 0, `exit ${code}\n${stdout}\n${stderr.split('\n').filter((l) => /error|forbidden/i.test(l)).slice(-10).join('\n')}`);
    assert.match(stdout, /cluster: /);
    assert.doesNotMatch(stderr, /forbidden/i, 'no call of up was refused');
  });

  test('helm upgrade --set mode=shadow: the relay gets VR_MODE=shadow, revision 2', async () => {
    // act
    const upgrade = await helmHere('upgrade', RELEASE.name, CHART_DIR, '--namespace', RELEASE.namespace, '--reuse-values', '--set', 'mode=shadow');
    const config = await sandbox.apiServer.kubeConfig('admin').makeApiClient(CoreV1Api).readNamespacedConfigMap({ name: 'virt-reconciler-relay', namespace: RELEASE.namespace });
    const history = await helmHere('history', RELEASE.name, '--namespace', RELEASE.namespace, '-o', 'json');
    // assert
    assert.equal(upgrade.status, 0, upgrade.stderr);
    assert.equal(config.data?.VR_MODE, 'shadow');
    assert.deepEqual((JSON.parse(history.stdout) as { revision: number }[]).map((h) => h.revision), [1, 2]);
  });

  test('helm uninstall: the product identities may do nothing again', async () => {
    // act
    const uninstall = await helmHere('uninstall', RELEASE.name, '--namespace', RELEASE.namespace, '--wait');
    // assert
    assert.equal(uninstall.status, 0, uninstall.stderr);
    assert.equal(await allowed(controllerUser('vmi'), 'create', '', 'pods'), false);
    assert.equal(await allowed(RELAY_USER, 'watch', 'kubevirt.io', 'virtualmachineinstances'), false);
  });
});
