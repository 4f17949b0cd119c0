/**
 * One side of the live lane: a sandbox (2 nodes, quick simulated boots, its storage agents),
 * one system on it — KubeVirt's virt-controller (started as the benchmarks start it,
 * test/bench/support/kubevirt.ts: its own identity, a TLS front on the emulator, the apishim only
 * when the emulator lacks the CRD list or Ingresses) or our runtime — and every scenario run in
 * turn; then the objects each scenario's namespace holds. The other side gets a twin sandbox:
 * the same options, the same inputs in the same order.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api } from '@kubernetes/client-node';
import { EXPORT_CA } from '../../../sandbox/storage/operator-cas.ts';
import { startSandbox, type Sandbox } from '../../../sandbox/sandbox.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import type { KubeClient, Resource } from '../../../shared/kube/client.ts';
import {
  DATA_VOLUMES, EVENTS, MIGRATIONS, NAMESPACES, PODS, PVCS, VM_CLONES, VM_EXPORTS, VM_POOLS, VM_RESTORES, VM_SNAPSHOT_CONTENTS, VM_SNAPSHOTS, VMI_REPLICA_SETS, VMIS, VMS, VOLUME_SNAPSHOTS,
} from '../../../shared/api/resources.ts';
import { KUBEVIRT_CONTROLLER_IDENTITY, kubevirtSetup, startVirtController } from '../../bench/support/kubevirt.ts';
import { newRuntime } from '../../e2e/support.ts';
import type { LiveObject } from './normalise.ts';
import { namespaceOf, type Scenario } from './scenarios.ts';

export type Side = 'kubevirt' | 'ours';

/** What one scenario left on one side. */
export interface ScenarioRun {
  readonly scenario: string;
  /** Steps that did not reach their condition in time (the scenario stops at the first). */
  readonly stuck?: string;
  readonly objects: LiveObject[];
  /** `Kind/name type reason component` of every Event in the namespace, sorted, deduplicated. */
  readonly events: string[];
  /** The first message of each Event's `Kind type reason` (what an event only one side has said). */
  readonly eventMessages?: Record<string, string>;
}

/** The kinds compared. */
export const COLLECTED: readonly Resource<unknown>[] = [VMIS, VMS, PODS, MIGRATIONS, PVCS, DATA_VOLUMES, VMI_REPLICA_SETS, VM_POOLS, VM_SNAPSHOTS, VM_SNAPSHOT_CONTENTS, VM_RESTORES, VM_CLONES, VM_EXPORTS, VOLUME_SNAPSHOTS] as never;

/** How long a step may take to reach its condition (a loaded 2-core machine). */
const STEP_TIMEOUT_MS = 90_000;
/** After the last step: time for the controllers' last writes (status, events) to land. */
const QUIET_MS = 3000;

/**
 * KubeVirt's export controller reads its CA from a fixed path, /etc/virt-controller/exportca
 * (`tls.crt`, `tls.key`: in a cluster, virt-operator's `kubevirt-export-ca` Secret mounted
 * there); out of cluster the file is missing and the controller dereferences nil on the first
 * export, which ends the whole process. So virt-controller runs in a mount namespace of its own
 * (`unshare -m`) where an overlay on /etc adds that directory with the sandbox's export CA
 * (sandbox/storage/operator-cas.ts): the machine's /etc is not touched. Where no mount namespace
 * can be made (no privilege), the binary runs as it is and says so; the export scenario then fails.
 */
async function withExportCa(sandbox: Sandbox, binary: string, dir: string, log: (line: string) => void): Promise<string> {
  const ca = join(dir, 'upper', 'virt-controller', 'exportca');
  mkdirSync(ca, { recursive: true });
  mkdirSync(join(dir, 'work'));
  const secret = await sandbox.apiServer.kubeConfig('admin').makeApiClient(CoreV1Api).readNamespacedSecret({ namespace: 'kubevirt', name: EXPORT_CA }).catch(() => undefined);
  for (const key of ['tls.crt', 'tls.key']) writeFileSync(join(ca, key), Buffer.from(secret?.data?.[key] ?? '', 'base64'));
  const script = join(dir, 'virt-controller');
  writeFileSync(script, `#!/bin/sh\nexec unshare -m --propagation private sh -c 'mount -t overlay overlay -o lowerdir=/etc,upperdir=${dir}/upper,workdir=${dir}/work /etc && exec "$0" "$@"' '${binary}' "$@"\n`, { mode: 0o755 });
  const probe = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', `mount -t overlay overlay -o lowerdir=/etc,upperdir=${dir}/upper,workdir=${dir}/work /etc && test -s /etc/virt-controller/exportca/tls.crt`]);
  if (probe.status !== 0 || !secret) {
    log(`kubevirt: no export CA for virt-controller (${!secret ? 'no kubevirt-export-ca Secret' : `unshare/overlay failed: ${probe.stderr.toString().trim()}`}): its export controller will crash on the first export`);
    return binary;
  }
  return script;
}

async function waitFor(cond: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await cond().catch(() => false)) return true;
    await sleep(100);
  }
  return false;
}

/** The key of {@link ScenarioRun.eventMessages}: the Event's involved kind, type and reason. */
export function eventMessageKey(kind: string | undefined, type: string | undefined, reason: string | undefined): string {
  return `${kind} ${type} ${reason}`;
}

async function collect(kube: KubeClient, ns: string): Promise<{ objects: LiveObject[]; events: string[]; eventMessages: Record<string, string> }> {
  const objects: LiveObject[] = [];
  for (const res of COLLECTED) {
    const list = await kube.list(res, ns).catch(() => ({ items: [] as unknown[] }));
    // Through JSON: the client revives some dates (pods, claims) as Date objects.
    for (const item of JSON.parse(JSON.stringify(list.items)) as LiveObject[]) objects.push({ ...item, apiVersion: `${res.group ? `${res.group}/` : ''}${res.version}`, kind: res.kind });
  }
  const events = (await kube.list(EVENTS, ns)).items as Array<{ involvedObject?: { kind?: string; name?: string }; type?: string; reason?: string; message?: string; source?: { component?: string }; reportingComponent?: string }>;
  const lines = events.map((e) => `${e.involvedObject?.kind}/${e.involvedObject?.name} ${e.type} ${e.reason} ${e.source?.component || e.reportingComponent || ''}`);
  const eventMessages: Record<string, string> = {};
  for (const e of events) eventMessages[eventMessageKey(e.involvedObject?.kind, e.type, e.reason)] ??= e.message ?? '';
  return { objects, events: [...new Set(lines)].sort(), eventMessages };
}

/** Runs every scenario on a fresh sandbox with `side`'s controller; `log` hears progress. */
export async function runSide(side: Side, scenarios: readonly Scenario[], log: (line: string) => void): Promise<{ runs: ScenarioRun[]; path: string }> {
  const sandbox: Sandbox = await startSandbox({
    nodes: 2,
    timings: { podStartupMs: 50, vmiBootMs: 50, vmiShutdownMs: 50 },
    storage: { snapshotCreateMs: 100, snapshotReadyMs: 100, provisionMs: 50 },
  });
  const kube = createKubeClient(sandbox.apiServer.kubeConfig('test'));
  let stop: () => Promise<void>;
  let path: string;
  try {
    if (side === 'kubevirt') {
      const found = kubevirtSetup();
      if ('skipped' in found) throw new Error(found.skipped);
      const caDir = mkdtempSync(join(tmpdir(), 'live-exportca-'));
      const setup = { ...found, binary: await withExportCa(sandbox, found.binary, caDir, log) };
      const vc = await startVirtController(setup, sandbox.controlPlane, sandbox.apiServer.kubeConfig(KUBEVIRT_CONTROLLER_IDENTITY), sandbox.apiServer.kubeConfig('admin')).catch((err: unknown) => {
        rmSync(caDir, { recursive: true, force: true });
        throw err;
      });
      stop = async () => {
        await vc.stop();
        rmSync(caDir, { recursive: true, force: true });
      };
      path = vc.apiPath;
    } else {
      const problems: string[] = [];
      const rt = newRuntime(sandbox, problems, sandbox.storage ? { virtApiUrl: sandbox.storage.virtApi.url } : {});
      rt.start();
      while (!rt.relay.ready) await sleep(50);
      stop = () => rt.stop();
      path = sandbox.controlPlane;
    }
  } catch (err) {
    await sandbox.stop();
    throw err;
  }
  const runs: ScenarioRun[] = [];
  try {
    for (const s of scenarios) {
      const ns = namespaceOf(s);
      await kube.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      let stuck: string | undefined;
      for (const step of s.steps) {
        const t0 = Date.now();
        try {
          await step.run(kube, ns, sandbox.storage ? { virtApiUrl: sandbox.storage.virtApi.url } : {});
        } catch (err) {
          stuck = `${step.what}: the write failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
          break;
        }
        if (step.until && !(await waitFor(() => step.until!(kube, ns), STEP_TIMEOUT_MS))) {
          stuck = `${step.what}: not reached within ${STEP_TIMEOUT_MS / 1000} s`;
          break;
        }
        log(`${side} ${s.name}: ${step.what} (${Date.now() - t0} ms)`);
      }
      if (stuck) log(`${side} ${s.name}: STUCK ${stuck}`);
      await sleep(QUIET_MS);
      runs.push({ scenario: s.name, ...(stuck ? { stuck } : {}), ...(await collect(kube, ns)) });
    }
  } finally {
    await stop();
    await sandbox.stop();
  }
  return { runs, path };
}
