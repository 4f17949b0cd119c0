/**
 * virt-api's identity rules in the sandbox, on both lanes (the emulator's in-process hooks; on the
 * real lane kube-apiserver calling the sandbox's virt-api webhooks): what only KubeVirt's service
 * accounts may write to a VMI or a migration, for a caller under its own name, under KubeVirt's
 * controller account, and impersonating it as the product's client does.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startSandbox, type Sandbox } from '../../../sandbox/sandbox.ts';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { MIGRATIONS, VMIS } from '../../../shared/api/resources.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { KubeInvalidError } from '../../../shared/kube/errors.ts';
import { kubevirtControllerUser } from '../../../shared/kube/kubevirt-identity.ts';
import { KUBEVIRT_CONTROLLER_IDENTITY } from '../../../sandbox/real/identities.ts';

const NS = 'default';
const vmi = (name: string, labels?: Record<string, string>): VirtualMachineInstance =>
  ({ metadata: { name, namespace: NS, ...(labels ? { labels } : {}) }, spec: { domain: { devices: {}, resources: { requests: { memory: '64Mi' } } } } }) as VirtualMachineInstance;

describe('virt-api identity rules in the sandbox', () => {
  let sb: Sandbox;
  /** A cluster admin under its own name: not one of KubeVirt's accounts. */
  let own: KubeClient;
  /** KubeVirt's controller account itself. */
  let kubevirt: KubeClient;
  /** The same admin through the product's client: VMI writes and migration creates impersonate kubevirt-controller. */
  let impersonating: KubeClient;

  before(async () => {
    sb = await startSandbox({ nodes: 1 });
    own = createKubeClient(sb.apiServer.kubeConfig('test'));
    kubevirt = createKubeClient(sb.apiServer.kubeConfig(KUBEVIRT_CONTROLLER_IDENTITY));
    impersonating = createKubeClient(sb.apiServer.kubeConfig('test'), { impersonateKubeVirtController: kubevirtControllerUser('kubevirt') });
  });
  after(async () => {
    await sb?.stop();
  });

  // One VMI per writer; each writes a status the mutator would keep only from KubeVirt's accounts.
  const writers = [
    { who: 'a non-KubeVirt user', client: () => own, kept: false },
    { who: 'kubevirt-controller itself', client: () => kubevirt, kept: true },
    { who: 'a user impersonating kubevirt-controller', client: () => impersonating, kept: true },
  ];
  for (const [i, w] of writers.entries()) {
    test(`a VMI status patch by ${w.who} is ${w.kept ? 'kept' : 'put back, silently'}`, async () => {
      // arrange
      const name = `status-${i}`;
      await own.create(VMIS, vmi(name));
      // act: the write itself succeeds either way
      const answer = await w.client().patch(VMIS, NS, name, { type: 'merge', body: { status: { phase: 'Scheduling', reason: 'Written' } } });
      const read = await own.get(VMIS, NS, name);
      // assert
      assert.equal(answer.status?.phase, w.kept ? 'Scheduling' : 'Pending', 'the answer is what was stored');
      assert.equal(read?.status?.phase, w.kept ? 'Scheduling' : 'Pending', w.kept ? 'KubeVirt accounts may write the status' : "virt-api's mutator put the old status back");
    });
  }

  test('a full update (PUT) of a VMI status by a non-KubeVirt user is put back too', async () => {
    // arrange
    const created = await own.create(VMIS, vmi('status-put'));
    // act
    await own.update(VMIS, { ...created, status: { ...created.status, phase: 'Running' } });
    // assert
    assert.equal((await own.get(VMIS, NS, 'status-put'))?.status?.phase, 'Pending');
  });

  test('a VMI spec change is refused to a non-KubeVirt user (422) and allowed as kubevirt-controller', async () => {
    // arrange
    await own.create(VMIS, vmi('spec'));
    const patch = { type: 'merge' as const, body: { spec: { domain: { devices: { autoattachGraphicsDevice: false } } } } };
    // act + assert
    await assert.rejects(own.patch(VMIS, NS, 'spec', patch), (err: Error) => {
      assert.ok(err instanceof KubeInvalidError, `422 Invalid, got ${err.name}: ${err.message}`);
      assert.match(err.message, /admission webhook "virtualmachineinstances-update-validator.kubevirt.io" denied the request: update of VMI object is restricted/);
      return true;
    });
    const patched = await impersonating.patch(VMIS, NS, 'spec', patch);
    assert.equal(patched.spec.domain.devices.autoattachGraphicsDevice, false);
  });

  test("a reserved kubevirt.io/ label: refused on a VMI's update and create to a non-KubeVirt user, allowed as kubevirt-controller", async () => {
    // arrange
    await own.create(VMIS, vmi('labels'));
    const label = { type: 'merge' as const, body: { metadata: { labels: { 'kubevirt.io/nodeName': 'node01' } } } };
    // act + assert
    await assert.rejects(own.patch(VMIS, NS, 'labels', label), /modification of the following reserved kubevirt.io\/ labels on a VMI object is prohibited/);
    assert.equal((await impersonating.patch(VMIS, NS, 'labels', label)).metadata?.labels?.['kubevirt.io/nodeName'], 'node01');
    await assert.rejects(own.create(VMIS, vmi('labelled', { 'kubevirt.io/nodeName': 'node01' })), /virtualmachineinstances-create-validator.kubevirt.io" denied the request: creation of the following reserved kubevirt.io\/ labels/);
    assert.ok((await impersonating.create(VMIS, vmi('labelled', { 'kubevirt.io/nodeName': 'node01' }))).metadata?.uid);
  });

  test('a migration with a priority: refused to a non-KubeVirt user, created as kubevirt-controller', async () => {
    // arrange
    await own.create(VMIS, vmi('migrating'));
    const migration = (name: string) => ({ metadata: { name, namespace: NS }, spec: { vmiName: 'migrating', priority: 'system-critical' } });
    // act + assert
    await assert.rejects(own.create(MIGRATIONS, migration('by-user') as never), /only virt-controller is allowed to set priority field/);
    assert.ok((await impersonating.create(MIGRATIONS, migration('by-controller') as never)).metadata?.uid);
  });

  test('an impersonated write is counted and audited under the identity that sent it, the impersonated user beside it', async () => {
    // arrange
    await own.create(VMIS, vmi('audited'));
    // act
    await impersonating.patch(VMIS, NS, 'audited', { type: 'merge', body: { status: { reason: 'Audited' } } });
    // assert
    const entries = await eventually(() => sb.apiServer.audit.query({ resource: 'virtualmachineinstances', name: 'audited', verb: 'patch' }));
    assert.equal(entries[0]?.identity, 'test', 'the authenticated identity, as kube-apiserver audit `user`');
    assert.equal(entries[0]?.impersonatedUser, 'system:serviceaccount:kubevirt:kubevirt-controller');
    assert.ok(sb.apiServer.counters.count({ identity: 'test', verb: 'patch', resource: 'virtualmachineinstances' }) >= 1);
  });
});

/** The real lane's audit is read from a file: wait for an entry. */
async function eventually<T>(read: () => T[]): Promise<T[]> {
  for (let i = 0; i < 50; i++) {
    const got = read();
    if (got.length > 0) return got;
    await new Promise((r) => setTimeout(r, 100));
  }
  return read();
}
