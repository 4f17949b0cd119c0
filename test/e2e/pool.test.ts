/**
 * The VM pool controller end to end: sandbox cluster ← relay → SQLite queue → pool, VM and VMI
 * functions, all real (LocalRuntime); the simulated scheduler, kubelet and virt-handler run the
 * VMs. What the test does is what a user does: create a pool, change its template, scale it with
 * the real `kubectl scale vmpool/<name>`. The rollout's promise is checked on the API server's
 * audit log: replaying every VMI write, at no instant are more than `maxUnavailable` of the pool's
 * VMs unavailable (VMI missing, terminating, not Running or not Ready).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { VirtualMachineInstance, VirtualMachinePool } from '../../shared/api/index.ts';
import { VM_POOLS, VMIS, VMS } from '../../shared/api/resources.ts';
import { KUBECTL } from '../kubectl/support.ts';
import { NS, queueIdle, startSlice, until, vmiManifest, type Slice } from './support.ts';

const IMAGE_1 = 'quay.io/kubevirt/cirros-container-disk-demo:v1.9.0';
const IMAGE_2 = 'quay.io/kubevirt/cirros-container-disk-demo:v1.9.1';

let s: Slice;

before(async () => {
  s = await startSlice({ timings: { podStartupMs: 30, vmiBootMs: 30, vmiShutdownMs: 30 } });
});
after(async () => {
  await s?.stop();
});

function poolManifest(name: string, spec: Partial<VirtualMachinePool['spec']>): VirtualMachinePool {
  const vmi = vmiManifest('unused');
  return {
    apiVersion: 'pool.kubevirt.io/v1beta1',
    kind: 'VirtualMachinePool',
    metadata: { name, namespace: NS },
    spec: {
      replicas: 3,
      selector: { matchLabels: { pool: name } },
      virtualMachineTemplate: {
        metadata: { labels: { pool: name } },
        spec: { runStrategy: 'Always', template: { metadata: { labels: { pool: name } }, spec: { ...vmi.spec, volumes: [{ name: 'containerdisk', containerDisk: { image: IMAGE_1 } }] } } },
      },
      ...spec,
    },
  };
}

/** The pool's VMs by name (sorted), the ones not being deleted. */
async function liveVms(pool: string): Promise<string[]> {
  const vms = await s.kube.list(VMS, NS, { labelSelector: `pool=${pool}` });
  return vms.items.filter((v) => !v.metadata?.deletionTimestamp).map((v) => v.metadata?.name ?? '').sort();
}

function available(vmi: VirtualMachineInstance | undefined): boolean {
  return vmi !== undefined && !vmi.metadata?.deletionTimestamp && vmi.status?.phase === 'Running' && vmi.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

/** Every VM of the pool Ready, every VMI Running and Ready with `image`, and the pool status agreeing. */
async function allRunning(pool: string, replicas: number, image: string): Promise<boolean> {
  const vms = await s.kube.list(VMS, NS, { labelSelector: `pool=${pool}` });
  if (vms.items.length !== replicas) return false;
  for (const vm of vms.items) {
    if (vm.status?.ready !== true) return false;
    const vmi = await s.kube.get(VMIS, NS, vm.metadata?.name ?? '');
    if (!available(vmi) || vmi?.spec.volumes?.[0]?.containerDisk?.image !== image) return false;
  }
  return (await s.kube.get(VM_POOLS, NS, pool))?.status?.readyReplicas === replicas;
}

/** Runs the real kubectl against the sandbox (identity admin). */
function kubectl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(KUBECTL!, args, { env: { ...process.env, KUBECONFIG: s.sandbox.kubeconfigPath, HOME: process.env.HOME ?? '/tmp' }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) || 1 : 0, stdout, stderr });
    });
  });
}

describe('VM pool end to end', () => {
  test('a template change rolls out with never more than maxUnavailable VMs unavailable (every audit-log instant)', async () => {
    // arrange: 4 VMs, maxUnavailable 1, all Running and Ready on the first image
    const name = 'roll';
    await s.kube.create(VM_POOLS, poolManifest(name, { replicas: 4, maxUnavailable: 1, updateStrategy: { proactive: { selectionPolicy: { sortPolicy: 'AscendingOrder' } } } }));
    await until('the pool runs 4 VMs on the first image', () => allRunning(name, 4, IMAGE_1), { problems: s.problems });
    const start = s.sandbox.apiServer.audit.query().length;
    const initial = new Map((await s.kube.list(VMIS, NS)).items.filter((v) => v.metadata?.name?.startsWith(`${name}-`)).map((v) => [v.metadata?.name ?? '', v]));
    // act: the user changes the template
    const pool = await s.kube.get(VM_POOLS, NS, name);
    const t = structuredClone(pool!.spec.virtualMachineTemplate);
    t.spec!.template.spec!.volumes = [{ name: 'containerdisk', containerDisk: { image: IMAGE_2 } }];
    await s.kube.patch(VM_POOLS, NS, name, { type: 'merge', body: { spec: { virtualMachineTemplate: t } } });
    await until('every VMI runs the second image', () => allRunning(name, 4, IMAGE_2), { tries: 6000, problems: s.problems });
    // assert: replay the VMI writes since the change
    const vmis = new Map(initial);
    let worst = 0;
    let instants = 0;
    const entries = s.sandbox.apiServer.audit.query({ resource: 'virtualmachineinstances' }).filter((e) => e.name.startsWith(`${name}-`));
    const all = s.sandbox.apiServer.audit.query();
    const since = new Set(all.slice(start));
    for (const e of entries) {
      if (!since.has(e)) continue;
      if (e.type === 'DELETED') vmis.delete(e.name);
      else vmis.set(e.name, e.object as unknown as VirtualMachineInstance);
      const unavailable = [0, 1, 2, 3].filter((i) => !available(vmis.get(`${name}-${i}`))).length;
      worst = Math.max(worst, unavailable);
      instants++;
    }
    console.log(`# rollout of 4 VMs, maxUnavailable 1: ${instants} VMI audit-log instants replayed, at most ${worst} unavailable`);
    assert.ok(instants > 10, `the rollout wrote VMIs (${instants} instants)`);
    assert.equal(worst, 1, `at most maxUnavailable (1) VMs unavailable at once; the worst instant had ${worst}`);
    assert.deepEqual(await liveVms(name), ['roll-0', 'roll-1', 'roll-2', 'roll-3'], 'the same VMs, restarted in place');
  });

  test('scale-in follows the policy (DescendingOrder); kubectl scale vmpool/<name> drives it both ways', { skip: KUBECTL ? false : 'no kubectl' }, async () => {
    // arrange
    const name = 'shrink';
    await s.kube.create(VM_POOLS, poolManifest(name, { replicas: 4, scaleInStrategy: { proactive: { selectionPolicy: { sortPolicy: 'DescendingOrder' } } } }));
    await until('4 VMs running', () => allRunning(name, 4, IMAGE_1), { problems: s.problems });
    const start = s.sandbox.apiServer.audit.query().length;
    // act: down to 2
    const down = await kubectl(['scale', `vmpool/${name}`, '--replicas=2', '-n', NS]);
    await until('2 VMs left', async () => (await liveVms(name)).length === 2 && (await s.kube.list(VMS, NS, { labelSelector: `pool=${name}` })).items.length === 2, { problems: s.problems });
    const deleted = s.sandbox.apiServer.audit
      .query({ resource: 'virtualmachines', verb: 'delete' })
      .filter((e) => s.sandbox.apiServer.audit.query().indexOf(e) >= start && e.name.startsWith(`${name}-`))
      .map((e) => e.name);
    // and up to 3 again: the lowest free index comes back
    const up = await kubectl(['scale', `vmpool/${name}`, '--replicas=3', '-n', NS]);
    await until('3 VMs running', () => allRunning(name, 3, IMAGE_1), { problems: s.problems });
    const scale = await kubectl(['get', `vmpool/${name}`, '-n', NS, '-o', 'jsonpath={.spec.replicas} {.status.replicas} {.status.readyReplicas}']);
    // assert
    assert.equal(down.code, 0, down.stderr);
    assert.match(down.stdout, /scaled/);
    assert.deepEqual(new Set(deleted), new Set(['shrink-3', 'shrink-2']), 'DescendingOrder deletes the highest indices');
    assert.equal(up.code, 0, up.stderr);
    assert.deepEqual(await liveVms(name), ['shrink-0', 'shrink-1', 'shrink-2']);
    assert.equal(scale.stdout, '3 3 3');
    await until('the queues drain', () => queueIdle(s, ['pool', 'vm', 'vmi']));
  });
});
