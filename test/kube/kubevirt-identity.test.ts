/**
 * Which requests the product sends as KubeVirt's controller (shared/kube/kubevirt-identity.ts),
 * how the runtime configures it, and that both transports send `Impersonate-User` on exactly
 * those requests (read back from the emulator's audit, which keeps the impersonated user).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApiServer, type ApiServer } from '../../sandbox/apiserver/index.ts';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { MIGRATIONS, PODS, VMIS, VMS, type ResourceCoordinates } from '../../shared/api/resources.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Verb } from '../../shared/kube/errors.ts';
import { createHttpKubeClient } from '../../shared/kube/http-client.ts';
import { impersonationFromEnv, isKubeVirtServiceAccount, judgedByVirtApiIdentity, kubevirtControllerUser } from '../../shared/kube/kubevirt-identity.ts';

describe('the writes virt-api judges by identity', () => {
  const cases: { verb: Verb; res: ResourceCoordinates; subresource?: 'status'; judged: boolean; why: string }[] = [
    { verb: 'create', res: VMIS, judged: true, why: 'reserved labels at create' },
    { verb: 'update', res: VMIS, judged: true, why: 'status put back, spec and reserved labels refused' },
    { verb: 'patch', res: VMIS, judged: true, why: 'the same for a patch' },
    { verb: 'get', res: VMIS, judged: false, why: 'a read changes nothing' },
    { verb: 'list', res: VMIS, judged: false, why: 'a read changes nothing' },
    { verb: 'delete', res: VMIS, judged: false, why: 'no webhook on delete' },
    { verb: 'create', res: MIGRATIONS, judged: true, why: 'only virt-controller sets spec.priority' },
    { verb: 'patch', res: MIGRATIONS, judged: false, why: 'no identity rule on a migration update' },
    { verb: 'patch', res: VMS, subresource: 'status', judged: false, why: "a VM's status subresource has no such webhook" },
    { verb: 'create', res: PODS, judged: false, why: 'not a KubeVirt object' },
  ];
  for (const c of cases) {
    test(`${c.verb} ${c.res.plural}${c.subresource ? `/${c.subresource}` : ''}: ${c.judged ? 'as kubevirt-controller' : 'own identity'} (${c.why})`, () => {
      assert.equal(judgedByVirtApiIdentity({ verb: c.verb, res: c.res, subresource: c.subresource }), c.judged);
    });
  }

  test("KubeVirt's four service accounts, in KubeVirt's namespace only", () => {
    // assert
    for (const sa of ['kubevirt-apiserver', 'kubevirt-controller', 'kubevirt-handler', 'kubevirt-synchronization-controller']) assert.ok(isKubeVirtServiceAccount(`system:serviceaccount:kubevirt:${sa}`), sa);
    assert.equal(isKubeVirtServiceAccount('system:serviceaccount:kubevirt:kubevirt-operator'), false, "virt-operator's is not one of them");
    assert.equal(isKubeVirtServiceAccount('system:serviceaccount:other:kubevirt-controller'), false);
    assert.equal(isKubeVirtServiceAccount('system:serviceaccount:kv:kubevirt-controller', 'kv'), true);
  });

  const envCases: { env: Record<string, string>; want: string | undefined }[] = [
    { env: {}, want: 'system:serviceaccount:kubevirt:kubevirt-controller' },
    { env: { KUBEVIRT_NAMESPACE: 'kv-system' }, want: 'system:serviceaccount:kv-system:kubevirt-controller' },
    { env: { VR_IMPERSONATE_KUBEVIRT: 'false' }, want: undefined },
    { env: { VR_IMPERSONATE_KUBEVIRT: 'true', KUBEVIRT_NAMESPACE: ' ' }, want: 'system:serviceaccount:kubevirt:kubevirt-controller' },
  ];
  for (const c of envCases) {
    test(`the functions' environment ${JSON.stringify(c.env)} → ${c.want ?? 'off'}`, () => {
      assert.equal(impersonationFromEnv(c.env), c.want);
    });
  }
});

describe('both transports send Impersonate-User on those requests only', () => {
  let api: ApiServer;
  before(async () => {
    api = await startApiServer({ port: 0 });
  });
  after(async () => {
    await api.close();
  });

  const transports: { name: string; make: () => KubeClient }[] = [
    { name: 'client-node', make: () => createKubeClient(api.kubeConfig('wire-node'), { impersonateKubeVirtController: kubevirtControllerUser() }) },
    { name: 'node:http', make: () => createHttpKubeClient({ server: api.url, skipTLSVerify: true, token: async () => 'wire-http' }, { impersonateKubeVirtController: kubevirtControllerUser() }) },
  ];
  for (const t of transports) {
    test(`${t.name}: a VMI create and patch act as kubevirt-controller, a pod create as the caller`, async () => {
      // arrange
      const kube = t.make();
      const name = `wire-${t.name.replace(/[^a-z]/g, '')}`;
      // act
      await kube.create(VMIS, { metadata: { name, namespace: 'default' }, spec: { domain: { devices: {} } } } as VirtualMachineInstance);
      await kube.patch(VMIS, 'default', name, { type: 'merge', body: { metadata: { annotations: { a: 'b' } } } });
      await kube.create(PODS, { metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'i' }] } });
      // assert
      const vmiWrites = api.audit.query({ resource: 'virtualmachineinstances', name });
      assert.deepEqual(vmiWrites.map((e) => `${e.verb} ${e.impersonatedUser}`), ['create system:serviceaccount:kubevirt:kubevirt-controller', 'patch system:serviceaccount:kubevirt:kubevirt-controller']);
      const pod = api.audit.query({ resource: 'pods', name });
      assert.equal(pod.length, 1);
      assert.equal(pod[0]!.impersonatedUser, undefined, 'everything else keeps its own identity');
      assert.equal(pod[0]!.identity, vmiWrites[0]!.identity, 'and all are audited under the identity that sent them');
    });
  }
});
