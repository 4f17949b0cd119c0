/**
 * The workload updater end to end (issue 14): a KubeVirt upgrade (virt-operator's rollout in the
 * sandbox: spec.imageTag changed → Deploying → Deployed with new deployment ids) moves 20 running
 * VMIs to the new virt-launcher by live migration — relay → SQLite queue → workload-updater,
 * migration and VMI functions → sandbox, on a sped-up sandbox clock. Checked: every VMI ends on
 * the new launcher; migrations go in rounds within the per-cluster budget (never more than 5
 * running at an audit-log instant, never two unfinished migrations of one VMI); the KubeVirt CR's
 * status.outdatedVirtualMachineInstanceWorkloads goes 20 → … → 0.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { KUBEVIRTS, MIGRATIONS, VMIS } from '../../shared/api/resources.ts';
import { WORKLOAD_UPDATE_MIGRATION_ANNOTATION } from '../../shared/api/vmi-eviction.ts';
import { OUTDATED_VMIS_GAUGE } from '../../functions/workload-updater/deps.ts';
import { inCommitOrder, peaksFromAudit, vmisWithTwoUnfinished, type Peaks } from '../support/migration-peaks.ts';
import { NS, startSlice, until, vmiManifest, type Slice } from './support.ts';

const SPEED = 10;
const NAMES = Array.from({ length: 20 }, (_, i) => `wu-${String(i).padStart(2, '0')}`);
const OLD = 'quay.io/kubevirt/virt-launcher:v1.9.0';
const NEW = 'quay.io/kubevirt/virt-launcher:v1.9.1';

describe('workload updater end to end', () => {
  let s: Slice;
  /** The migration peaks of the update (the first test), judged by the second. */
  let peaks: Peaks | undefined;
  before(async () => {
    s = await startSlice({ speed: SPEED, nodes: 3, timings: { kubevirtDeployMs: 10_000 } });
  });
  after(async () => {
    await s.stop();
  });

  test('a launcher image change moves 20 VMIs to the new launcher by migration, in rounds; the outdated count goes to 0', async () => {
    // arrange
    await s.kube.patch(KUBEVIRTS, 'kubevirt', 'kubevirt', { type: 'merge', body: { spec: { workloadUpdateStrategy: { workloadUpdateMethods: ['LiveMigrate'] } } } });
    for (const n of NAMES) await s.kube.create(VMIS, vmiManifest(n));
    await until('20 VMIs Running on the old launcher, migratable', async () => {
      const vmis = (await s.kube.list(VMIS, NS)).items.filter((v) => NAMES.includes(v.metadata?.name ?? ''));
      return vmis.length === 20 && vmis.every((v) => v.status?.phase === 'Running' && v.status.launcherContainerImageVersion === OLD && v.status.conditions?.some((c) => c.type === 'LiveMigratable' && c.status === 'True'));
    }, { problems: s.problems });
    // The VMIs' nodes as the log starts: the replay below attributes target pods to source nodes.
    const nodesBefore = new Map((await s.kube.list(VMIS, NS)).items.map((v) => [v.metadata?.name ?? '', v.status?.nodeName ?? '']));
    s.sandbox.apiServer.audit.clear();
    // act: the upgrade
    await s.kube.patch(KUBEVIRTS, 'kubevirt', 'kubevirt', { type: 'merge', body: { spec: { imageTag: 'v1.9.1' } } });
    await until('every VMI on the new launcher and the outdated count 0', async () => {
      const vmis = (await s.kube.list(VMIS, NS)).items.filter((v) => NAMES.includes(v.metadata?.name ?? ''));
      const kv = await s.kube.get(KUBEVIRTS, 'kubevirt', 'kubevirt');
      // The migrations' own final phase too: a VMI reports the new launcher before the migration
      // controller has written its migration Succeeded (a fresh-clone CI run read one in between).
      const migrations = (await s.kube.list(MIGRATIONS, NS)).items.filter((m) => m.metadata?.annotations?.[WORKLOAD_UPDATE_MIGRATION_ANNOTATION] !== undefined);
      const final = migrations.every((m) => m.status?.phase === 'Succeeded' || m.status?.phase === 'Failed');
      return final && vmis.every((v) => v.status?.phase === 'Running' && v.status.launcherContainerImageVersion === NEW) && kv?.status?.outdatedVirtualMachineInstanceWorkloads === 0;
    }, { problems: s.problems, tries: 12_000 });
    // assert
    const audit = s.sandbox.apiServer.audit.query();
    const counts = audit
      .filter((e) => e.resource === 'kubevirts' && e.subresource === 'status' && e.identity !== 'node-sim')
      .map((e) => (e.object as { status?: { outdatedVirtualMachineInstanceWorkloads?: number } }).status?.outdatedVirtualMachineInstanceWorkloads);
    const created = audit.filter((e) => e.resource === 'virtualmachineinstancemigrations' && e.type === 'ADDED');
    const ours = (await s.kube.list(MIGRATIONS, NS)).items.filter((m) => m.metadata?.annotations?.[WORKLOAD_UPDATE_MIGRATION_ANNOTATION] !== undefined);
    peaks = peaksFromAudit(inCommitOrder(audit), nodesBefore);
    // Rounds: creations closer than a second (sandbox clock) apart belong to one round. The audit
    // entry's time, not creationTimestamp: the real API server stamps whole wall-clock seconds.
    const times = created.map((e) => e.time).sort((a, b) => a - b);
    const rounds: number[] = [];
    times.forEach((t, i) => (i > 0 && t - times[i - 1]! < 1000 ? rounds[rounds.length - 1]!++ : rounds.push(1)));
    console.log(`outdated count written: ${counts.join(' → ')}; ${ours.length} workload-update migrations in rounds of ${rounds.join(', ')}; peak running ${peaks.cluster}, peak outbound ${peaks.perNode}`);
    assert.equal(counts[0], 20, 'the first count after the rollout names all 20');
    assert.equal(counts.at(-1), 0);
    assert.match(s.rt.metrics.render(), new RegExp(`\n${OUTDATED_VMIS_GAUGE} 0\n`), 'the runtime\'s /metrics shows the gauge at 0');
    // Not strictly monotonic: virt-handler clears a migrated VMI's launcherContainerImageVersion
    // ("unknown", not counted) before the VMI controller fills in the new one, and a count taken
    // in between can be one lower than the next.
    assert.ok(counts.every((n) => n !== undefined && n <= 20), `never above 20: ${counts.join(' → ')}`);
    assert.ok(ours.every((m) => m.status?.phase === 'Succeeded' && m.metadata?.name?.startsWith('kubevirt-workload-update-') && m.spec?.priority === 'system-critical'), 'every workload-update migration succeeded');
    assert.deepEqual([...new Set(ours.map((m) => m.spec?.vmiName))].sort(), NAMES, 'every VMI moved by migration');
    assert.ok(rounds.length >= 4 && rounds.every((r) => r <= 5), `in rounds of at most 5 (the per-cluster budget): ${rounds.join(', ')}`);
    assert.deepEqual(vmisWithTwoUnfinished(audit), [], 'no VMI had two unfinished migrations at once');
  });

  test('the update kept the migration limits at every audit-log instant (5 running in the cluster, 2 outbound per node)', () => {
    // arrange: the update above
    assert.ok(peaks, 'the update ran');
    // act + assert
    assert.ok(peaks.cluster <= 5, `at most 5 running in the cluster, saw ${peaks.cluster}`);
    assert.ok(peaks.perNode <= 2, `at most 2 outbound per node, saw ${peaks.perNode} on ${peaks.perNodeAt}`);
  });
});
