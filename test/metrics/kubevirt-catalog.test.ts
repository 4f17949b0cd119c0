/**
 * Every metric KubeVirt's virt-controller registers (the fixture, read from KubeVirt's source at
 * the commit it names) is in our exposition with KubeVirt's type, help text and label names, and
 * the exposition passes `promtool check metrics` (KubeVirt's own `_total`-less counters aside).
 * The relay's collectors get watch events as the relay delivers them; the per-reconcile metrics
 * come from the same functions `instrumented()` and the workers call. The live path (a runtime on
 * the sandbox, scraped by a real Prometheus) is test/e2e/prometheus-alerts.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubevirtMetrics } from '../../functions/relay/metrics/route.ts';
import { COMPONENT, SNAPSHOT, VMI_SYNC } from '../../shared/metrics/kubevirt/catalog.ts';
import { addMetric, setMetric } from '../../shared/metrics/kubevirt/record.ts';
import { restClientMetrics } from '../../shared/metrics/kubevirt/rest-client.ts';
import { workqueueAdds, workqueueDepth, workqueueReconcile, workqueueRetry } from '../../shared/metrics/kubevirt/workqueue.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import { KUBE_VERBS, type KubeClient } from '../../shared/kube/client.ts';
import { VMIS } from '../../shared/api/resources.ts';
import type { WatchedObject } from '../../shared/relay/route.ts';
import { KUBEVIRT_FIXTURE, KUBEVIRT_LINT_FINDINGS, mismatches, NO_PROMTOOL, parseExposition, PROMTOOL, promtoolCheckMetrics } from './support/kubevirt-exposition.ts';

const T0 = '2025-01-01T00:00:00Z';
const at = (s: number) => new Date(Date.parse(T0) + s * 1000).toISOString().replace('.000Z', 'Z');

function vmi(phase: string, extra: { deleting?: boolean } = {}): WatchedObject {
  return {
    metadata: {
      name: 'vmi-a', namespace: 'ns1', uid: 'uid-a', resourceVersion: '2',
      annotations: { 'vm.kubevirt.io/os': 'fedora', 'kubevirt.io/cluster-instancetype-name': 'u1.small' },
      labels: { 'kubevirt.io/outdatedLauncherImage': '' },
      ...({ creationTimestamp: T0 } as object),
      ...(extra.deleting ? { deletionTimestamp: at(30) } : {}),
    },
    spec: {
      evictionStrategy: 'LiveMigrate',
      domain: { devices: { interfaces: [{ name: 'default', masquerade: {} }, { name: 'sec', bridge: {}, model: 'virtio' }] }, resources: { requests: { memory: '128Mi' } } },
      networks: [{ name: 'default', pod: {} }, { name: 'sec', multus: { networkName: 'br-net' } }],
    },
    status: {
      phase,
      nodeName: 'node01',
      phaseTransitionTimestamps: [{ phase: 'Pending', phaseTransitionTimestamp: at(1) }, { phase: 'Scheduled', phaseTransitionTimestamp: at(5) }, { phase: 'Running', phaseTransitionTimestamp: at(9) }, { phase: 'Succeeded', phaseTransitionTimestamp: at(40) }],
      interfaces: [{ name: 'default', interfaceName: 'eth0', ipAddress: '10.0.0.5' }],
      guestOSInfo: { kernelRelease: '6.1', machine: 'x86_64', name: 'Fedora', versionId: '39' },
      machine: { type: 'q35' },
      migrationState: { migrationUid: 'mig-uid-1', startTimestamp: at(20), endTimestamp: at(25), completed: true },
      memory: { memoryOverhead: '220Mi' },
    },
  };
}

const vm: WatchedObject = {
  metadata: { name: 'vm-a', namespace: 'ns1', uid: 'vm-uid', labels: { app: 'web', 'kubevirt.io/domain': 'vm-a' }, ...({ creationTimestamp: T0 } as object) },
  spec: {
    runStrategy: 'Always',
    template: {
      metadata: { annotations: { 'vm.kubevirt.io/workload': 'server' } },
      spec: {
        domain: { cpu: { cores: 2 }, memory: { guest: '1Gi' }, resources: { limits: { cpu: '2', memory: '2Gi' } }, devices: { interfaces: [{ name: 'default', masquerade: {} }] } },
        networks: [{ name: 'default', pod: {} }],
        volumes: [{ name: 'rootdisk', persistentVolumeClaim: { claimName: 'pvc-a' } }],
      },
    },
  },
  status: { printableStatus: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: at(12) }] },
};

function migration(name: string, uid: string, phase: string): WatchedObject {
  return {
    metadata: { name, namespace: 'ns1', uid, ...({ creationTimestamp: T0 } as object) },
    spec: { vmiName: 'vmi-a' },
    status: { phase, phaseTransitionTimestamps: [{ phase: 'Pending', phaseTransitionTimestamp: at(1) }, { phase: 'Succeeded', phaseTransitionTimestamp: at(24) }] },
  };
}

/** Answers every call (a stand-in for the API server: this test is about the accounting of the calls, not their effect). */
const answeringClient = Object.fromEntries(KUBE_VERBS.map((v) => [v, async () => (v === 'list' ? { items: [], resourceVersion: '1' } : v === 'get' ? undefined : {})])) as unknown as KubeClient;

/** A registry fed as the relay and the runtime feed theirs, with one reconcile still running. */
async function populated(): Promise<MetricsRegistry> {
  const reg = new MetricsRegistry();
  const km = new KubevirtMetrics(reg, () => true);
  km.start();
  const see = (kind: string, type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: WatchedObject) => km.collector.observe(kind, type, obj);
  see('VirtualMachineClusterInstancetype', 'ADDED', { metadata: { name: 'u1.small', labels: { 'instancetype.kubevirt.io/vendor': 'kubevirt.io' } }, spec: {} });
  see('VirtualMachineInstance', 'ADDED', vmi('Scheduled'));
  see('VirtualMachineInstance', 'MODIFIED', vmi('Running'));
  see('Pod', 'ADDED', { metadata: { name: 'virt-launcher-vmi-a-x', namespace: 'ns1', labels: { 'kubevirt.io/created-by': 'uid-a' } }, spec: { nodeName: 'node01' }, status: { phase: 'Running' } });
  see('PersistentVolumeClaim', 'ADDED', { metadata: { name: 'pvc-a', namespace: 'ns1' }, spec: { resources: { requests: { storage: '10Gi' } }, volumeMode: 'Filesystem' } });
  see('VirtualMachine', 'ADDED', vm);
  see('VirtualMachineInstanceMigration', 'ADDED', migration('mig-1', 'mig-uid-1', 'Running'));
  see('VirtualMachineInstanceMigration', 'MODIFIED', migration('mig-1', 'mig-uid-1', 'Succeeded'));
  see('VirtualMachineInstanceMigration', 'ADDED', migration('mig-2', 'mig-uid-2', 'Failed'));
  see('VirtualMachineInstanceMigration', 'ADDED', migration('mig-3', 'mig-uid-3', 'Pending'));
  // A second VMI that is deleted once it is final: the from-deletion histogram.
  const other = (phase: string, deleting: boolean) => ({ ...vmi(phase, { deleting }), metadata: { ...vmi(phase, { deleting }).metadata, name: 'vmi-b', uid: 'uid-b' } });
  see('VirtualMachineInstance', 'ADDED', other('Running', true));
  see('VirtualMachineInstance', 'MODIFIED', other('Succeeded', true));

  const client = restClientMetrics(answeringClient, reg, 'https://10.0.0.1:6443');
  await client.get(VMIS, 'ns1', 'vmi-a');
  await client.list(VMIS, 'ns1', { labelSelector: 'a=b' });
  workqueueReconcile(reg, 'vmi', 12).done();
  workqueueReconcile(reg, 'vm', 3); // still running at the scrape: the in-flight gauges
  workqueueAdds(reg, 'vmi');
  workqueueRetry(reg, 'vmi');
  workqueueDepth(reg, 'vmi', 4);
  addMetric(reg, VMI_SYNC.total, { namespace: 'ns1', name: 'vmi-a' });
  setMetric(reg, SNAPSHOT.succeededTimestamp, { name: 'vm-a', snapshot_name: 'snap-1', namespace: 'ns1' }, 1735689600);
  setMetric(reg, COMPONENT.outdated, {}, 1);
  return reg;
}

describe("KubeVirt's virt-controller metrics", () => {
  it(`the fixture lists KubeVirt's 44 names at ${KUBEVIRT_FIXTURE.kubevirtCommit.slice(0, 8)}`, () => {
    assert.equal(KUBEVIRT_FIXTURE.metrics.length, 44, 'the fixture should hold every name virt-controller registers');
  });

  it('every name is exposed with its type, help text and labels', async () => {
    // arrange
    const reg = await populated();
    // act
    const parsed = parseExposition(reg.render());
    // assert
    const problems = KUBEVIRT_FIXTURE.metrics.flatMap((m) => mismatches(parsed, m));
    assert.deepEqual(problems, [], `our exposition differs from KubeVirt's:\n${problems.join('\n')}`);
  });

  it('the values say what KubeVirt says', async () => {
    // arrange
    const parsed = parseExposition((await populated()).render());
    const value = (name: string, labels: Record<string, string> = {}) =>
      parsed.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
    // act + assert
    const cases: [string, Record<string, string>, number | undefined][] = [
      ['kubevirt_vmi_info', { name: 'vmi-a', phase: 'running', os: 'fedora', instance_type: 'u1.small', evictable: 'false', outdated: 'true', vmi_pod: 'virt-launcher-vmi-a-x', guest_os_machine: 'q35', guest_os_arch: 'x86_64' }, 1],
      ['kubevirt_vmi_non_evictable', { name: 'vmi-a', node: 'node01' }, 1],
      ['kubevirt_vmi_status_addresses', { name: 'vmi-a', address: '10.0.0.5', type: 'ExternalInterface', interface_name: 'eth0' }, 1],
      ['kubevirt_vmi_migration_end_time_seconds', { name: 'vmi-a', migration_name: 'mig-1', status: 'succeeded' }, Date.parse(at(25)) / 1000],
      ['kubevirt_vmi_vnic_info', { vnic_name: 'sec', binding_type: 'core', binding_name: 'bridge', network: 'br-net', model: 'virtio' }, 1],
      ['kubevirt_vmi_launcher_memory_overhead_bytes', { name: 'vmi-a' }, 220 * 1024 * 1024],
      ['kubevirt_vm_info', { name: 'vm-a', workload: 'server', status: 'running', status_group: 'running' }, 1],
      ['kubevirt_vm_resource_requests', { name: 'vm-a', resource: 'cpu', unit: 'cores', source: 'guest_effective' }, 2],
      ['kubevirt_vm_resource_requests', { name: 'vm-a', resource: 'memory', source: 'guest' }, 1024 ** 3],
      ['kubevirt_vm_resource_limits', { name: 'vm-a', resource: 'cpu' }, 2],
      ['kubevirt_vm_disk_allocated_size_bytes', { persistentvolumeclaim: 'pvc-a', device: 'rootdisk', volume_mode: 'Filesystem' }, 10 * 1024 ** 3],
      ['kubevirt_vm_running_status_last_transition_timestamp_seconds', { name: 'vm-a' }, Date.parse(at(12)) / 1000],
      ['kubevirt_vm_error_status_last_transition_timestamp_seconds', { name: 'vm-a' }, 0],
      ['kubevirt_vm_labels', { name: 'vm-a', label_app: 'web', label_kubevirt_io_domain: 'vm-a' }, 1],
      ['kubevirt_vmi_migrations_in_pending_phase', {}, 1],
      ['kubevirt_vmi_migration_succeeded', { vmi: 'vmi-a', vmim: 'mig-1' }, 1],
      ['kubevirt_vmi_migration_failed', { vmim: 'mig-2' }, 1],
      ['kubevirt_vmi_phase_transition_time_seconds_count', { phase: 'Running', last_phase: 'Scheduled' }, 1],
      ['kubevirt_vmi_phase_transition_time_seconds_sum', { phase: 'Running', last_phase: 'Scheduled' }, 4],
      ['kubevirt_vmi_phase_transition_time_from_deletion_seconds_sum', { phase: 'Succeeded' }, 10],
      ['kubevirt_vmi_migration_phase_transition_time_from_creation_seconds_sum', { phase: 'Succeeded' }, 24],
      ['kubevirt_rest_client_requests_total', { code: '404', method: 'GET', verb: 'GET', resource: 'virtualmachineinstances', host: '10.0.0.1:6443' }, 1],
      ['kubevirt_rest_client_requests_total', { code: '200', method: 'GET', verb: 'LIST' }, 1],
      ['kubevirt_rest_client_request_latency_seconds_count', { url: 'https://10.0.0.1:6443/apis/kubevirt.io/v1/namespaces/%7Bnamespace%7D/virtualmachineinstances?labelSelector=%7Bvalue%7D' }, 1],
      ['kubevirt_rest_client_rate_limiter_duration_seconds_sum', { verb: 'GET' }, 0],
      ['kubevirt_workqueue_queue_duration_seconds_count', { name: 'virt-controller-vmi' }, 1],
      ['kubevirt_workqueue_depth', { name: 'virt-controller-vmi' }, 4],
      ['kubevirt_virt_controller_leading_status', {}, 1],
      ['kubevirt_virt_controller_ready_status', {}, 1],
    ];
    const wrong = cases.filter(([name, labels, want]) => value(name, labels) !== want).map(([name, labels, want]) => `${name}${JSON.stringify(labels)}: ${value(name, labels)}, want ${want}`);
    assert.deepEqual(wrong, []);
  });

  it('promtool check metrics finds nothing but the _total-less counters KubeVirt itself names', { skip: PROMTOOL ? false : NO_PROMTOOL }, async () => {
    // arrange
    const text = (await populated()).render();
    // act
    const { findings } = promtoolCheckMetrics(text);
    // assert
    const ours = findings.filter((f) => !KUBEVIRT_LINT_FINDINGS.has(f));
    assert.deepEqual(ours, [], `promtool flags our exposition:\n${ours.join('\n')}`);
  });
});

describe('a relay replaced in the same registry', () => {
  it('leaves it when detached: its families written once, not once per relay that ever ran', () => {
    // arrange: a killed relay and its replacement on one registry (the chaos harness's kill)
    const reg = new MetricsRegistry();
    const dead = new KubevirtMetrics(reg, () => true);
    const live = new KubevirtMetrics(reg, () => true);
    live.start();
    const leading = () => (reg.render().match(/^kubevirt_virt_controller_leading_status /gm) ?? []).length;
    const twice = leading();
    // act
    dead.detach();
    // assert
    assert.equal(twice, 2, 'both relays wrote the family');
    assert.equal(leading(), 1);
    assert.match(reg.render(), /^kubevirt_virt_controller_leading_status 1$/m, 'the live one');
  });
});
