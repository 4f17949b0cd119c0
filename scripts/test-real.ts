/**
 * `npm run test:real`: the real lane. Builds the real control plane when its sources changed
 * (infra/control-plane/, cached in .cache/), then runs the suites that exercise a cluster with
 * VR_CONTROL_PLANE=real, so each starts the upstream kube-apiserver, kube-controller-manager and
 * kube-scheduler instead of the emulator (docs/control-plane.md). Extra arguments narrow the
 * files as for `npm test` (`npm run test:real -- test/e2e`).
 */
import { spawnSync } from 'node:child_process';
import { ensureBuilt } from '../sandbox/real/build.ts';

/** The suites that run on both lanes. */
export const REAL_LANE_SUITES = [
  'test/sandbox/apiserver/',
  'test/sandbox/nodes/strict-kubelet.test.ts',
  'test/sandbox/nodes/strict-virt-handler.test.ts',
  'test/sandbox/kubevirt/mutation-webhook.test.ts',
  'test/e2e/vmi-slice.test.ts',
  'test/e2e/wffc.test.ts',
  'test/e2e/backend-storage.test.ts',
  'test/e2e/hotplug.test.ts',
  'test/e2e/hotplug-migration.test.ts',
  'test/e2e/backend-storage-recovery.test.ts',
  'test/e2e/networks.test.ts',
  'test/e2e/nic-hotplug.test.ts',
  'test/e2e/vm-run-strategies.test.ts',
  'test/e2e/pool.test.ts',
  'test/e2e/replicaset.test.ts',
  'test/e2e/export.test.ts',
  'test/e2e/instancetype.test.ts',
  'test/e2e/instancetype-expand.test.ts',
  'test/e2e/trace.test.ts',
  'test/e2e/diagnose.test.ts',
  'test/e2e/diagnose-owners.test.ts',
  'test/e2e/node-drain.test.ts',
  'test/e2e/storage-vmis.test.ts',
  'test/e2e/vsock.test.ts',
  'test/e2e/tsc.test.ts',
  'test/e2e/selinux.test.ts',
  'test/e2e/node-failure.test.ts',
  'test/e2e/workload-update.test.ts',
  'test/e2e/live-update.test.ts',
  'test/e2e/memory-dump.test.ts',
  'test/e2e/volume-migration.test.ts',
  'test/e2e/disruption-budget.test.ts',
  'test/e2e/prometheus-alerts.test.ts',
  'test/e2e/snapshot.test.ts',
  'test/e2e/restore.test.ts',
  'test/e2e/backup.test.ts',
  'test/e2e/clone.test.ts',
  'test/e2e/cutover.test.ts',
  'test/functions/migration/sandbox-flow.test.ts',
  'test/functions/migration/timeouts-gc.test.ts',
  'test/functions/migration/parallel-limits.test.ts',
  'test/chaos/chaos.test.ts',
  'test/chaos/controllers-chaos.test.ts',
  'test/chaos/drain-chaos.test.ts',
  'test/kubectl/',
  'test/infra/helm/real-lane.test.ts',
  'test/differential/launcher-pod.test.ts',
];

const args = process.argv.slice(2);
const filters = args.filter((a) => !a.startsWith('-'));
const flags = args.filter((a) => a.startsWith('-'));
const suites = filters.length === 0 ? REAL_LANE_SUITES : REAL_LANE_SUITES.filter((s) => filters.some((f) => s.includes(f) || f.includes(s)));
if (suites.length === 0) {
  process.stderr.write(`test:real: none of the real-lane suites (${REAL_LANE_SUITES.join(', ')}) matches ${filters.join(' ')}\n`);
  process.exit(1);
}
try {
  await ensureBuilt((line) => process.stdout.write(`${line}\n`));
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
process.stdout.write(`test:real: ${suites.join(' ')} against the real control plane\n`);
const result = spawnSync(process.execPath, ['scripts/run-tests.ts', ...flags, ...(filters.length ? filters : suites)], {
  stdio: 'inherit',
  env: { ...process.env, VR_CONTROL_PLANE: 'real' },
});
process.exit(result.status ?? 1);
