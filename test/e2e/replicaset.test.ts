/**
 * The replica set end to end: the sandbox cluster, the local runtime (relay → queue → replica set
 * and VMI functions → sandbox) and the real kubectl: `kubectl scale vmirs/<name>` up and down, a
 * VMI deleted by hand is replaced, an orphan VMI matching the selector is adopted.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LocalRuntime } from '../../local/runtime.ts';
import { startSandbox, type Sandbox } from '../../sandbox/sandbox.ts';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { VMI_REPLICA_SETS, VMIS } from '../../shared/api/resources.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { KUBECTL, runKubectl, type KubectlResult } from '../kubectl/support.ts';
import { newRuntime, NS, until, vmiManifest } from './support.ts';

const RS = 'e2e-rs';
const LABELS = { app: 'e2e-rs' };

let sandbox: Sandbox;
let rt: LocalRuntime;
let kube: KubeClient;
let dir: string;
const problems: string[] = [];

function kubectl(args: string[], stdin?: string): Promise<KubectlResult> {
  return runKubectl({ kubeconfig: sandbox.kubeconfigPath, dir }, args, stdin);
}

async function rsUid(): Promise<string> {
  return (await kube.get(VMI_REPLICA_SETS, NS, RS))?.metadata?.uid ?? '';
}

/** The replica set's VMIs that are not being deleted. */
async function liveVmis(): Promise<VirtualMachineInstance[]> {
  const uid = await rsUid();
  return (await kube.list(VMIS, NS)).items.filter((v) => !v.metadata?.deletionTimestamp && v.metadata?.ownerReferences?.some((r) => r.controller && r.uid === uid));
}

async function settledAt(n: number): Promise<void> {
  await until(
    `${n} Running VMIs of ${RS}, status.replicas ${n}`,
    async () => {
      const vmis = await liveVmis();
      const rs = await kube.get(VMI_REPLICA_SETS, NS, RS);
      return vmis.length === n && vmis.every((v) => v.status?.phase === 'Running') && rs?.status?.replicas === n;
    },
    { tries: 6000, problems },
  );
}

describe('replica set end to end (relay → queue → functions → sandbox, driven by kubectl)', { skip: KUBECTL ? false : 'no kubectl on this machine' }, () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vr-rs-e2e-'));
    sandbox = await startSandbox({ nodes: 2, kubeconfigOut: join(dir, 'kubeconfig'), timings: { podStartupMs: 50, vmiBootMs: 50, vmiShutdownMs: 50 } });
    rt = newRuntime(sandbox, problems);
    rt.start();
    kube = createKubeClient(sandbox.apiServer.kubeConfig('test'));
    const template = vmiManifest('ignored');
    const manifest = {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineInstanceReplicaSet',
      metadata: { name: RS, namespace: NS },
      spec: { replicas: 2, selector: { matchLabels: LABELS }, template: { metadata: { labels: LABELS }, spec: template.spec } },
    };
    const applied = await kubectl(['apply', '-f', '-'], JSON.stringify(manifest));
    assert.equal(applied.code, 0, applied.stderr);
  });
  after(async () => {
    await rt?.stop();
    await sandbox?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('the replica set starts its 2 replicas', async () => {
    // arrange: the replica set applied in before()
    // act
    await settledAt(2);
    // assert
    const rs = await kube.get(VMI_REPLICA_SETS, NS, RS);
    assert.equal(rs?.status?.labelSelector, 'app=e2e-rs');
    assert.equal(rs?.metadata?.annotations?.['kubevirt.io/latest-observed-api-version'], 'v1');
  });

  test('kubectl scale up to 5, then down to 1', async () => {
    // arrange
    await settledAt(2);
    // act
    const up = await kubectl(['scale', `vmirs/${RS}`, '--replicas=5']);
    await settledAt(5);
    const down = await kubectl(['scale', `vmirs/${RS}`, '--replicas=1']);
    await settledAt(1);
    // assert
    assert.equal(up.code, 0, up.stderr);
    assert.equal(down.code, 0, down.stderr);
    const get = await kubectl(['get', 'vmirs', RS, '-o', 'jsonpath={.spec.replicas}/{.status.replicas}']);
    assert.equal(get.stdout, '1/1');
  });

  test('a VMI deleted by hand is replaced', async () => {
    // arrange
    await settledAt(1);
    const [victim] = await liveVmis();
    // act
    const deleted = await kubectl(['delete', 'vmi', victim!.metadata!.name!, '--wait=false']);
    await until('a replacement', async () => (await liveVmis()).some((v) => v.metadata?.name !== victim!.metadata!.name), { tries: 6000, problems });
    await settledAt(1);
    // assert
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.notEqual((await liveVmis())[0]?.metadata?.name, victim!.metadata!.name);
  });

  test('an orphan VMI matching the selector is adopted and counted', async () => {
    // arrange: paused, so the adoption is seen before any scaling; then room for it
    await settledAt(1);
    await kubectl(['patch', 'vmirs', RS, '--type=merge', '-p', '{"spec":{"paused":true}}']);
    const orphan = vmiManifest('e2e-rs-orphan');
    orphan.metadata = { ...orphan.metadata, labels: LABELS };
    // act
    await kube.create(VMIS, orphan);
    await until('the orphan adopted', async () => (await kube.get(VMIS, NS, 'e2e-rs-orphan'))?.metadata?.ownerReferences?.some((r) => r.controller && r.kind === 'VirtualMachineInstanceReplicaSet') === true, { tries: 6000, problems });
    const before = new Set((await liveVmis()).map((v) => v.metadata?.name));
    await kubectl(['patch', 'vmirs', RS, '--type=merge', '-p', '{"spec":{"paused":false,"replicas":2}}']);
    await settledAt(2);
    // assert
    const ref = (await kube.get(VMIS, NS, 'e2e-rs-orphan'))?.metadata?.ownerReferences?.[0];
    assert.deepEqual([ref?.name, ref?.uid, ref?.controller, ref?.blockOwnerDeletion], [RS, await rsUid(), true, true]);
    const now = (await liveVmis()).map((v) => v.metadata?.name);
    assert.deepEqual(new Set(now), before, 'the adopted orphan fills the second replica: nothing new is created');
  });
});
