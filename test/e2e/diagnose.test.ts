/**
 * `virt-reconciler diagnose` end to end: the sandbox and the local runtime (relay → SQLite queue
 * file → vm/vmi/migration workers → SQLite table), each of the seed's symptoms provoked the way
 * it happens (a missing PVC, an invalid network spec, a poison key, a full migration limit, an
 * unschedulable target pod, injected 409s on status writes, a relay that stops delivering), then
 * the real CLI in a child process (the relay-lag case in process, on a clock 15 s ahead): its
 * first line names the cause; a healthy VMI gets "healthy" and exit 0.
 */
import { kubevirtAccountClient } from '../support/virt-api-client.ts';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { readOnly } from '../../ops/cluster-reader.ts';
import { diagnose, DIAGNOSABLE } from '../../ops/diagnose/diagnose.ts';
import { parseTarget } from '../../ops/target.ts';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { KUBEVIRTS, MIGRATIONS, PODS, VMIS } from '../../shared/api/resources.ts';
import { MIGRATION_JOB_UID_LABEL } from '../../shared/api/well-known.ts';
import { runCli } from '../support/cli.ts';
import { emulatorOnly } from '../support/lanes.ts';
import { diagnoseCli as diagnoseSlice, NS, queueIdle, RUNTIME, startSlice, until, vmiManifest, type Slice } from './support.ts';

/** The CLI with no $KUBECONFIG of the machine's: the cluster is the sandbox's, passed by flag. */
const cli = (args: readonly string[]) => runCli(args, { KUBECONFIG: '' });

const dir = mkdtempSync(join(tmpdir(), 'diagnose-e2e-'));
const db = join(dir, 'virt-reconciler.db');
let s: Slice;

const diagnoseCli = (target: string) => diagnoseSlice(s, db, target);

function withSpec(name: string, spec: Partial<VirtualMachineInstance['spec']>): VirtualMachineInstance {
  const base = vmiManifest(name);
  return { ...base, spec: { ...base.spec, ...spec } } as VirtualMachineInstance;
}

async function running(name: string): Promise<VirtualMachineInstance> {
  let vmi: VirtualMachineInstance | undefined;
  await until(`VMI ${name} Running`, async () => (vmi = await s.kube.get(VMIS, NS, name))?.status?.phase === 'Running', { problems: s.problems });
  return vmi!;
}

before(async () => {
  // Retries quick and few, so a poison key is dead-lettered in well under a second: no
  // dead-letter window (deadLetterAfterMs 0), since the test's poison fails transiently.
  s = await startSlice({ start: false, runtime: { dbPath: db, retry: { baseDelayMs: 10, maxDelayMs: 100, maxAttempts: 5, deadLetterAfterMs: 0 } } });
  // One migration at a time cluster-wide, so a second one waits on the limit.
  await s.kube.patch(KUBEVIRTS, 'kubevirt', 'kubevirt', { type: 'merge', body: { spec: { configuration: { migrations: { parallelMigrationsPerCluster: 1 } } } } });
  s.rt.start();
  while (!s.rt.relay.ready) await new Promise((r) => setTimeout(r, 20));
});
after(async () => {
  await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('virt-reconciler diagnose on the sandbox', () => {
  test('a healthy VMI: "healthy", exit 0', async () => {
    // arrange
    await s.kube.create(VMIS, vmiManifest('fine'));
    await running('fine');
    await until('queues idle', () => queueIdle(s, ['vm', 'vmi']));
    // act
    const d = await diagnoseCli('vmi/default/fine');
    // assert
    assert.equal(d.code, 0, d.text);
    assert.match(d.first, /^healthy: vmi default\/fine is Running on \S+ \(launcher pod virt-launcher-fine-\w+ Running\)$/);
    assert.equal(d.json.healthy, true);
  });

  test('table: each symptom of the seed, provoked; the first line names the cause, exit 1', async () => {
    // arrange
    const cases: { target: string; provoke: () => Promise<void>; first: RegExp }[] = [
      {
        target: 'vmi/default/no-claim',
        provoke: async () => {
          await s.kube.create(VMIS, withSpec('no-claim', { volumes: [{ name: 'containerdisk', persistentVolumeClaim: { claimName: 'data' } }] }));
        },
        first: /^no launcher pod: PVC default\/data does not exist \(volume containerdisk\)$/,
      },
      {
        target: 'vmi/default/bad-net',
        provoke: async () => {
          const base = vmiManifest('bad-net');
          // A secondary (Multus) network that names no NetworkAttachmentDefinition.
          const domain = { ...base.spec.domain, devices: { ...base.spec.domain.devices, interfaces: [{ name: 'default', masquerade: {} }, { name: 'sec', bridge: {} }] } };
          await s.kube.create(VMIS, withSpec('bad-net', { domain, networks: [{ name: 'default', pod: {} }, { name: 'sec', multus: { networkName: '' } }] } as never));
        },
        first: /^no launcher pod: invalid network spec: spec\.networks\[1\]\.multus\.networkName: is required$/,
      },
    ];
    for (const c of cases) {
      await c.provoke();
      // Let the controller see it and give up or wait.
      await until(`${c.target} settled`, () => queueIdle(s, ['vm', 'vmi']));
      // act
      const d = await diagnoseCli(c.target);
      // assert
      assert.equal(d.code, 1, `${c.target}: ${d.text}`);
      assert.match(d.first, c.first, `${c.target}:\n${d.text}`);
      assert.match(d.json.verdict, c.first, "the same verdict in --json");
    }
  });

  test('a poison key: "no launcher pod: the key … is dead-lettered (reason, attempts, when)"', emulatorOnly('fault injection'), async () => {
    // arrange: every read of a VMI by the runtime fails until the key is dead-lettered — and every
    // launcher pod create, for a pass the relay's view answers without a read (docs/scale.md).
    s.sandbox.apiServer.faults.failNext(500, 1000, { verb: 'get', resource: 'virtualmachineinstances', identity: RUNTIME });
    s.sandbox.apiServer.faults.failNext(500, 1000, { verb: 'create', resource: 'pods', identity: RUNTIME });
    await s.kube.create(VMIS, vmiManifest('poison'));
    await until('poison dead-lettered', async () => (await s.rt.queue.listDeadLetters({ controller: 'vmi', key: 'default/poison' })).length > 0);
    s.sandbox.apiServer.faults.clear();
    await until('queues idle', () => queueIdle(s, ['vm', 'vmi']));
    // act
    const d = await diagnoseCli('vmi/default/poison');
    // assert
    assert.equal(d.code, 1, d.text);
    assert.match(d.first, /^no launcher pod: the key vmi default\/poison is dead-lettered \((ServerError|FailedCreate), 5 attempts, \d+ s ago\)$/, d.text);
    assert.match(d.text, /→ fix the cause, then: virt-reconciler replay --controller vmi --key default\/poison/);
  });

  test('injected 409s on the VMI status writes: "status writes for this VMI got N conflicts"', emulatorOnly('fault injection'), async () => {
    // arrange
    await s.kube.create(VMIS, vmiManifest('contended'));
    await running('contended');
    await until('queues idle', () => queueIdle(s, ['vm', 'vmi']));
    s.sandbox.apiServer.faults.failNext(409, 4, { verb: 'patch', resource: 'virtualmachineinstances', identity: RUNTIME });
    s.sandbox.apiServer.faults.failNext(409, 4, { verb: 'update', resource: 'virtualmachineinstances', identity: RUNTIME });
    // act: a stale launcher image version is a field only the controller writes (the node side
    // would put a phase back first), so the controller must write; its status writes keep losing.
    // Written as virt-handler: virt-api puts back a VMI status anyone but KubeVirt's accounts change.
    await kubevirtAccountClient(s.sandbox.apiServer.kubeConfig('test'), 'kubevirt-handler').patch(VMIS, NS, 'contended', { type: 'merge', body: { metadata: { labels: { poke: '1' } }, status: { launcherContainerImageVersion: 'stale' } } });
    await until('conflicts used up', () => s.sandbox.apiServer.faults.remaining() <= 4);
    await until('queues idle', () => queueIdle(s, ['vm', 'vmi']));
    s.sandbox.apiServer.faults.clear();
    const d = await diagnoseCli('vmi/default/contended');
    // assert
    assert.equal(d.code, 1, d.text);
    assert.match(d.first, /^status writes for this VMI got \d+ conflicts in the last 5 min$/, d.text);
  });

  test('migrations: the target pod unschedulable (timeout in …); the next one Pending on the full cluster limit', async () => {
    // arrange: a VMI pinned to its node cannot get a target pod anywhere else.
    const node = s.sandbox.nodeNames[0]!;
    await s.kube.create(VMIS, withSpec('pinned', { nodeSelector: { 'kubernetes.io/hostname': node } }));
    await s.kube.create(VMIS, vmiManifest('free'));
    await Promise.all([running('pinned'), running('free')]);
    await s.kube.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'mig-pinned', namespace: NS }, spec: { vmiName: 'pinned' } });
    await until('target pod unschedulable', async () => {
      const pods = await s.kube.list(PODS, NS, { labelSelector: MIGRATION_JOB_UID_LABEL });
      return pods.items.some((p) => p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False'));
    });
    await s.kube.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'mig-free', namespace: NS }, spec: { vmiName: 'free' } });
    await until('mig-free reconciled', async () => (await s.rt.state.traces.recent('migration', 'default/mig-free', Date.now())).length > 0);
    await until('queues idle', () => queueIdle(s, ['migration']));
    // act
    const [pinned, free] = [await diagnoseCli('migration/default/mig-pinned'), await diagnoseCli('migration/default/mig-free')];
    // assert
    assert.equal(pinned.code, 1, pinned.text);
    assert.match(pinned.first, /^target pod unschedulable: 0\/\d+ nodes are available: .*; the unschedulable timeout fires in [45] min( \d+ s)?$/, pinned.text);
    assert.equal(free.code, 1, free.text);
    assert.equal(free.first, 'migration Pending: the cluster limit is full (1 of 1) — this migration holds it: default/mig-pinned', free.text);
  });

  test('a relay that stopped delivering: "the relay\'s last event for this VMI … is older than its current resourceVersion"', async () => {
    // arrange
    await s.kube.create(VMIS, vmiManifest('lagging'));
    await running('lagging');
    await until('queues idle', () => queueIdle(s, ['vm', 'vmi']));
    await s.rt.relay.stop();
    const changed = await s.kube.patch(VMIS, NS, 'lagging', { type: 'merge', body: { metadata: { labels: { changed: 'while-the-relay-was-down' } } } });
    // act: 15 s on, nothing has reconciled the change.
    const d = await diagnose(parseTarget('vmi/default/lagging', DIAGNOSABLE), { cluster: readOnly(s.kube), queue: s.rt.queue, state: s.rt.state, now: Date.now() + 15_000 });
    // assert
    assert.equal(d.healthy, false);
    assert.match(d.verdict, new RegExp(`^the relay's last event for this VMI \\(resourceVersion \\d+, seen \\d+ s ago\\) is older than its current resourceVersion ${changed.metadata?.resourceVersion}$`), JSON.stringify(d, null, 2));
  });

  test('bad input: one line, exit 2', async () => {
    // arrange
    const cases = [['diagnose'], ['diagnose', 'pod/default/x'], ['diagnose', 'vmi/default'], ['diagnose', 'vmi/a/b', 'extra'], ['diagnose', 'vmi/a/b', '--table', 't']];
    // act
    const runs = await Promise.all(cases.map((c) => cli([...c, '--db', db])));
    // assert
    for (const [i, r] of runs.entries()) {
      assert.equal(r.code, 2, `${cases[i]!.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /^virt-reconciler diagnose: /);
    }
  });
});
