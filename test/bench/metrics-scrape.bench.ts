/**
 * The cost of a Prometheus scrape of KubeVirt's metrics at BENCH_SCRAPE_VMIS VMIs (default
 * 10,000; 2,000 with BENCH_QUICK=1): the relay's collectors get, as watch events, that many
 * Running VMIs shaped as the sandbox's (interfaces, conditions, phase transitions, guest OS, a
 * finished migration on every tenth), their VMs, launcher pods and claims; then the relay's
 * registry is rendered as /metrics serves it. Reported: ms per scrape (median of 5), bytes and
 * series per scrape, and the heap the collectors' records hold per VMI (with its VM, pod and
 * claim). The scale run (scale.bench.ts) reports the same scrape after its VMIs reach Running
 * through the whole pipeline. Never a test.
 */
import { KubevirtMetrics } from '../../functions/relay/metrics/route.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import type { WatchedObject } from '../../shared/relay/route.ts';
import { retainedHeapBytes } from './support/retained-heap.ts';
import { scrapeCost } from './support/scrape-cost.ts';

const N = Number(process.env.BENCH_SCRAPE_VMIS ?? (process.env.BENCH_QUICK === '1' ? 2000 : 10_000));
const T0 = Date.parse('2025-01-01T00:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

function say(line: string): void {
  process.stdout.write(`  ${line}\n`);
}

function objects(i: number): [string, WatchedObject][] {
  const name = `vm-${i}`;
  const ns = `ns-${i % 50}`;
  const uid = `uid-${i}`;
  const node = `node${String(i % 100).padStart(2, '0')}`;
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const iface = [{ name: 'default', masquerade: {} }];
  const networks = [{ name: 'default', pod: {} }];
  const vmi: WatchedObject = {
    metadata: { name, namespace: ns, uid, resourceVersion: String(i), labels: { 'kubevirt.io/nodeName': node, 'kubevirt.io/vm': name }, annotations: { 'vm.kubevirt.io/os': 'fedora', 'vm.kubevirt.io/workload': 'server', 'vm.kubevirt.io/flavor': 'small' }, ...({ creationTimestamp: at(0) } as object) },
    spec: { domain: { cpu: { cores: 1 }, resources: { requests: { memory: '128Mi' } }, devices: { interfaces: iface, disks: [{ name: 'rootdisk', disk: { bus: 'virtio' } }] } }, networks, volumes: [{ name: 'rootdisk', persistentVolumeClaim: { claimName: `${name}-root` } }] },
    status: {
      phase: 'Running',
      nodeName: node,
      conditions: [{ type: 'Ready', status: 'True' }, { type: 'LiveMigratable', status: 'True' }, { type: 'AgentConnected', status: 'True' }],
      phaseTransitionTimestamps: ['Pending', 'Scheduling', 'Scheduled', 'Running'].map((phase, k) => ({ phase, phaseTransitionTimestamp: at(k * 2) })),
      interfaces: [{ name: 'default', interfaceName: 'eth0', ipAddress: ip, ipAddresses: [ip], mac: '02:00:00:00:00:01', infoSource: 'domain, guest-agent' }],
      guestOSInfo: { kernelRelease: '6.5.6-300.fc39.x86_64', machine: 'x86_64', name: 'Fedora Linux', versionId: '39' },
      machine: { type: 'q35' },
      memory: { memoryOverhead: '230Mi', guestAtBoot: '128Mi', guestCurrent: '128Mi' },
      ...(i % 10 === 0 ? { migrationState: { migrationUid: `mig-${i}`, startTimestamp: at(20), endTimestamp: at(25), completed: true } } : {}),
    },
  };
  const vm: WatchedObject = {
    metadata: { name, namespace: ns, uid: `vm-${uid}`, labels: { app: 'web', tier: String(i % 3) }, ...({ creationTimestamp: at(0) } as object) },
    spec: { runStrategy: 'Always', template: { metadata: { annotations: { 'vm.kubevirt.io/os': 'fedora' } }, spec: vmi.spec as never } } as never,
    status: { printableStatus: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: at(8) }] },
  };
  const pod: WatchedObject = {
    metadata: { name: `virt-launcher-${name}-abcde`, namespace: ns, uid: `pod-${uid}`, labels: { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': uid }, annotations: { 'kubevirt.io/memory-overhead-bytes': '241172480' } },
    spec: { nodeName: node },
    status: { phase: 'Running' },
  };
  const pvc: WatchedObject = { metadata: { name: `${name}-root`, namespace: ns, uid: `pvc-${uid}` }, spec: { resources: { requests: { storage: '10Gi' } }, volumeMode: 'Filesystem' } };
  const migration: [string, WatchedObject][] = i % 10 === 0 ? [['VirtualMachineInstanceMigration', { metadata: { name: `mig-${i}`, namespace: ns, uid: `mig-${i}` }, spec: { vmiName: name }, status: { phase: 'Succeeded' } }]] : [];
  return [['VirtualMachineInstance', vmi], ['VirtualMachine', vm], ['Pod', pod], ['PersistentVolumeClaim', pvc], ...migration];
}

export async function run(): Promise<Record<string, unknown>> {
  const heapBefore = retainedHeapBytes();
  const registry = new MetricsRegistry();
  const metrics = new KubevirtMetrics(registry, () => true);
  metrics.start();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) for (const [kind, obj] of objects(i)) metrics.collector.observe(kind, 'ADDED', obj);
  const observeMs = performance.now() - t0;
  const heldKbPerVmi = Math.round(((retainedHeapBytes() - heapBefore) / 1024 / N) * 10) / 10;
  const scrape = scrapeCost(registry);
  say(`metrics scrape at ${N} VMIs (+ VMs, launcher pods, claims): ${scrape.msMedian} ms, ${scrape.bytes} bytes, ${scrape.series} series; records ${heldKbPerVmi} KB per VMI`);
  return { vmis: N, scrape, observeUsPerObject: Math.round((observeMs * 1000) / (N * 4)), heldKbPerVmi };
}
