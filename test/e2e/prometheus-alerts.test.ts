/**
 * KubeVirt's alerts in a real Prometheus (issue 32): Debian's prometheus scrapes the local
 * runtime's /metrics (the dashboard's, as `up` serves it) on the sandbox, every second, with
 * KubeVirt's rule file as this project ships it (infra/monitoring/kubevirt-rules.yaml). The
 * rules' `for:` durations (1 min to 24 h) are shortened to 1 s in this copy, and only here: the
 * real durations are checked by `promtool test rules` (test/metrics/kubevirt-rules.test.ts). The
 * one stand-in is kube-state-metrics' readiness of the relay pod (the local runtime is no pod).
 *
 * Provoked and observed through Prometheus's HTTP API:
 * - a VMI whose eviction strategy is LiveMigrate but whose disk is a ReadWriteOnce claim, which the
 *   sandbox's virt-handler reports not migratable (DisksNotLiveMigratable, as KubeVirt's) →
 *   VMCannotBeEvicted, cleared when the VMI is deleted;
 * - a KubeVirt upgrade with no workload update method → the launchers are outdated →
 *   OutdatedVirtualMachineInstanceWorkloads, cleared when the outdated VMI is gone;
 * - 12 live migrations of one VMI (a migration storm) → KubeVirtVMIExcessiveMigrations;
 * - NoLeadingVirtController and NoReadyVirtController stay quiet while the runtime runs, and fire
 *   once it stops.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDashboard, type Dashboard } from '../../local/dashboard/server.ts';
import { KUBEVIRTS, MIGRATIONS, PVCS, VMIS } from '../../shared/api/resources.ts';
import { REAL } from '../support/lanes.ts';
import { projectRoot } from '../support/reference.ts';
import { KUBEVIRT_FIXTURE, KUBEVIRT_LINT_FINDINGS, NO_PROMTOOL, parseExposition, PROMTOOL, promtoolCheckMetrics } from '../metrics/support/kubevirt-exposition.ts';
import { KUBE_STATE_STAND_IN, NO_PROMETHEUS, PROMETHEUS, startPrometheus, withShortFor, type Prometheus } from '../support/prometheus.ts';
import { NS, startSlice, until, vmiManifest, type Slice } from './support.ts';

const RULES = readFileSync(join(projectRoot, 'infra/monitoring/kubevirt-rules.yaml'), 'utf8');

describe('KubeVirt alerts in a real Prometheus scraping the local runtime', { skip: PROMETHEUS ? false : NO_PROMETHEUS }, () => {
  let s: Slice;
  let dashboard: Dashboard;
  let prom: Prometheus;
  /** The dashboard as `up --prometheus URL` starts it: its alerts panel reads this Prometheus. */
  let withAlerts: Dashboard;
  let stopped = false;

  before(async () => {
    s = await startSlice({ nodes: 2, timings: { kubevirtDeployMs: 300 }, storage: { bindVolumes: !REAL, provisionMs: 50 } });
    dashboard = await startDashboard({ source: s.rt, vmiPhases: async () => ({}), port: 0, sampleMs: 200 });
    prom = await startPrometheus(`127.0.0.1:${dashboard.port}`, { 'kubevirt-rules.yaml': withShortFor(RULES), 'kube-state-stand-in.yaml': KUBE_STATE_STAND_IN });
    withAlerts = await startDashboard({ source: s.rt, vmiPhases: async () => ({}), port: 0, prometheus: prom.url });
  });
  after(async () => {
    await withAlerts?.close();
    await prom?.stop();
    if (!stopped) {
      await dashboard?.close();
      await s?.stop();
    }
  });

  const firing = async (name: string, labels: Record<string, string> = {}) =>
    (await prom.alerts()).some((a) => a.state === 'firing' && a.labels.alertname === name && Object.entries(labels).every(([k, v]) => a.labels[k] === v));
  const waitAlert = (name: string, want: boolean, labels: Record<string, string> = {}) =>
    until(`${name}${JSON.stringify(labels)} ${want ? 'firing' : 'not firing'}`, async () => (await firing(name, labels)) === want, { tries: 6000, problems: s.problems });
  const running = (name: string) =>
    until(`${name} Running`, async () => (await s.kube.get(VMIS, NS, name))?.status?.phase === 'Running', { tries: 6000, problems: s.problems });

  test('while the runtime runs, NoLeadingVirtController and NoReadyVirtController stay quiet', async () => {
    // arrange: scrapes have happened and the rules have been evaluated a few times
    await until('leading and ready in Prometheus', async () => {
      const [leading, ready] = await Promise.all([prom.query('cluster:kubevirt_virt_controller_leading:sum'), prom.query('cluster:kubevirt_virt_controller_ready:sum')]);
      return leading[0]?.value === 1 && ready[0]?.value === 1;
    }, { tries: 6000 });
    // act
    await sleep(3000);
    // assert
    assert.equal(await firing('NoLeadingVirtController'), false, 'our leading gauge keeps NoLeadingVirtController quiet');
    assert.equal(await firing('NoReadyVirtController'), false, 'our ready gauge keeps NoReadyVirtController quiet');
  });

  test('a VMI that is not migratable but must live-migrate on eviction → VMCannotBeEvicted; deleted → cleared', async () => {
    // arrange: a disk on a ReadWriteOnce claim (not shared: virt-handler reports it not migratable)
    await s.kube.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'stuck-disk', namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'sandbox-csi' } });
    await until('claim stuck-disk Bound', async () => (await s.kube.get(PVCS, NS, 'stuck-disk'))?.status?.phase === 'Bound', { problems: s.problems });
    const manifest = vmiManifest('stuck', { evictionStrategy: 'LiveMigrate' });
    manifest.spec.domain.devices.disks = [...(manifest.spec.domain.devices.disks ?? []), { name: 'data', disk: { bus: 'virtio' } }];
    manifest.spec.volumes = [...(manifest.spec.volumes ?? []), { name: 'data', persistentVolumeClaim: { claimName: 'stuck-disk' } }];
    // act
    await s.kube.create(VMIS, manifest);
    await running('stuck');
    await until('virt-handler reports it not migratable', async () => (await s.kube.get(VMIS, NS, 'stuck'))?.status?.conditions?.some((c) => c.type === 'LiveMigratable' && c.status === 'False' && c.reason === 'DisksNotLiveMigratable') === true, { problems: s.problems });
    // assert
    await waitAlert('VMCannotBeEvicted', true, { name: 'stuck', namespace: NS });
    const panel = (await (await fetch(`${withAlerts.url}api/alerts`)).json()) as { configured: boolean; alerts: { name: string; state: string; subject: string }[] };
    assert.ok(panel.configured && panel.alerts.some((a) => a.name === 'VMCannotBeEvicted' && a.state === 'firing' && a.subject.includes('name=stuck')), `the dashboard's alerts panel shows it: ${JSON.stringify(panel)}`);
    assert.deepEqual(await (await fetch(`${dashboard.url}api/alerts`)).json(), { configured: false }, 'a dashboard without --prometheus says none is configured');
    await s.kube.delete(VMIS, NS, 'stuck');
    await waitAlert('VMCannotBeEvicted', false, { name: 'stuck' });
  });

  test('12 live migrations of one VMI → KubeVirtVMIExcessiveMigrations', async () => {
    // arrange
    await s.kube.create(VMIS, vmiManifest('hopper'));
    await running('hopper');
    // act: one migration after the other, as a storm of evictions would make them
    for (let i = 0; i < 12; i++) {
      const name = `hop-${i}`;
      await s.kube.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name, namespace: NS }, spec: { vmiName: 'hopper' } });
      await until(`${name} Succeeded`, async () => (await s.kube.get(MIGRATIONS, NS, name))?.status?.phase === 'Succeeded', { tries: 6000, problems: s.problems });
    }
    // assert
    await waitAlert('KubeVirtVMIExcessiveMigrations', true, { vmi: 'hopper', namespace: NS });
  });

  test('a KubeVirt upgrade that leaves a launcher outdated → OutdatedVirtualMachineInstanceWorkloads; gone → cleared', async () => {
    // arrange: no workload update method, so nothing moves the VMI to the new launcher
    await s.kube.patch(KUBEVIRTS, 'kubevirt', 'kubevirt', { type: 'merge', body: { spec: { workloadUpdateStrategy: { workloadUpdateMethods: [] } } } });
    await s.kube.create(VMIS, vmiManifest('old-launcher'));
    await running('old-launcher');
    // act
    await s.kube.patch(KUBEVIRTS, 'kubevirt', 'kubevirt', { type: 'merge', body: { spec: { imageTag: 'v1.9.1' } } });
    // assert
    await waitAlert('OutdatedVirtualMachineInstanceWorkloads', true);
    for (const v of (await s.kube.list(VMIS, NS)).items) await s.kube.delete(VMIS, NS, v.metadata?.name ?? '');
    await waitAlert('OutdatedVirtualMachineInstanceWorkloads', false);
  });

  test("the runtime's live exposition passes promtool check metrics, in KubeVirt's types", { skip: PROMTOOL ? false : NO_PROMTOOL }, async () => {
    // act
    const text = await (await fetch(`${dashboard.url}metrics`)).text();
    // assert
    const ours = promtoolCheckMetrics(text).findings.filter((f) => !KUBEVIRT_LINT_FINDINGS.has(f));
    assert.deepEqual(ours, [], `promtool flags the live exposition:\n${ours.join('\n')}`);
    const parsed = parseExposition(text);
    const wrongType = KUBEVIRT_FIXTURE.metrics.filter((m) => parsed.types.has(m.name) && parsed.types.get(m.name) !== m.type).map((m) => m.name);
    assert.deepEqual(wrongType, []);
    for (const name of ['kubevirt_vmi_migration_phase_transition_time_from_creation_seconds', 'kubevirt_workqueue_work_duration_seconds', 'kubevirt_rest_client_requests_total', 'kubevirt_vmi_sync_total', 'kubevirt_vmi_phase_transition_time_seconds']) {
      assert.ok(parsed.samples.some((s) => s.name === name || s.name === `${name}_count`), `${name} has series after the runs above`);
    }
  });

  test('once the runtime stops, NoLeadingVirtController and NoReadyVirtController fire', async () => {
    // act
    stopped = true;
    await dashboard.close();
    await s.stop();
    // assert
    await waitAlert('NoLeadingVirtController', true);
    await waitAlert('NoReadyVirtController', true);
  });
});
