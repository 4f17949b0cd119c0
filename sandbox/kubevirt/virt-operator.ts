/**
 * The part of virt-operator the sandbox plays: a KubeVirt upgrade. Changing the CR's
 * `spec.imageTag` / `spec.imageRegistry` (the launcher image is `<registry>/virt-launcher:<tag>`)
 * starts a rollout: `status.targetDeploymentID` becomes the new install's id and the phase
 * `Deploying`; `deployMs` later (sandbox clock) the new components are "up": the phase is
 * `Deployed` again and `status.observedDeploymentID` equals the target. The workload updater does
 * nothing until then (reference node-drain-updates §3.2 step 2).
 */
import { createHash } from 'node:crypto';
import { KUBEVIRT, MERGE_PATCH, isNotFound, type NodeSideApi } from '../nodes/api.ts';
import { KeyWorker } from '../nodes/key-worker.ts';
import type { RawList } from '../nodes/watched-cache.ts';
import type { Informer } from '../nodes/shared-informers.ts';
import { keyOf, splitKey, type KubeObject } from '../nodes/objects.ts';
import type { Clock, ClockTimer } from '../clock.ts';

/** KubeVirt's built-in defaults when the CR names no registry or tag. */
export const DEFAULT_REGISTRY = 'quay.io/kubevirt';
export const DEFAULT_TAG = 'v1.9.0';

interface KubeVirtCr extends KubeObject {
  spec?: { imageRegistry?: string; imageTag?: string };
  status?: { phase?: string; observedDeploymentID?: string; targetDeploymentID?: string };
}

const KUBEVIRTS = { ...KUBEVIRT, plural: 'kubevirts' } as const;

/** What an install is made of, for the deployment id. */
export function installOf(kv: KubeVirtCr): { registry: string; tag: string } {
  return { registry: kv.spec?.imageRegistry || DEFAULT_REGISTRY, tag: kv.spec?.imageTag || DEFAULT_TAG };
}

/** A stable id per install (virt-operator hashes its install strategy; we hash what varies here). */
export function deploymentIdOf(install: { registry: string; tag: string }): string {
  return createHash('sha256').update(`${install.registry}/virt-launcher:${install.tag}`).digest('hex').slice(0, 16);
}

function conditions(progressing: boolean, nowIso: string) {
  const reason = progressing ? 'DeploymentInProgress' : 'AllComponentsReady';
  const c = (type: string, status: string, message: string) => ({ type, status, reason, message, lastProbeTime: nowIso, lastTransitionTime: nowIso });
  return progressing
    ? [c('Available', 'True', 'Deploying version.'), c('Progressing', 'True', 'Deploying version.'), c('Degraded', 'False', 'Deploying version.')]
    : [c('Available', 'True', 'All components are ready.'), c('Progressing', 'False', 'All components are ready.'), c('Degraded', 'False', 'All components are ready.')];
}

export interface VirtOperatorOptions {
  api: NodeSideApi;
  clock: Clock;
  /** Simulated ms a rollout takes; default 10 000. */
  deployMs?: number;
  onError?: (what: string, err: unknown) => void;
}

export interface VirtOperator {
  stop(): Promise<void>;
}

export async function startVirtOperator(opts: VirtOperatorOptions): Promise<VirtOperator> {
  const { api, clock } = opts;
  const deployMs = opts.deployMs ?? 10_000;
  const rollouts = new Map<string, { id: string; dueMs: number; timer: ClockTimer }>();

  const patchStatus = async (kv: KubeVirtCr, status: Record<string, unknown>) => {
    const { namespace = '', name = '', resourceVersion } = kv.metadata ?? {};
    await api.custom.patchNamespacedCustomObjectStatus({ ...KUBEVIRTS, namespace, name, body: { metadata: { resourceVersion }, status } }, MERGE_PATCH);
  };

  const handle = async (key: string) => {
    const { namespace, name } = splitKey(key);
    const kv = crs.get(namespace, name);
    if (!kv) return;
    const install = installOf(kv);
    const id = deploymentIdOf(install);
    const st = kv.status ?? {};
    const now = clock.isoNow();
    if (!st.targetDeploymentID) {
      // The sandbox starts with KubeVirt already installed: record that install as deployed.
      await patchStatus(kv, { observedDeploymentID: id, targetDeploymentID: id, observedKubeVirtVersion: install.tag, targetKubeVirtVersion: install.tag, observedKubeVirtRegistry: install.registry, targetKubeVirtRegistry: install.registry });
      return;
    }
    if (st.targetDeploymentID !== id) {
      await patchStatus(kv, { phase: 'Deploying', targetDeploymentID: id, targetKubeVirtVersion: install.tag, targetKubeVirtRegistry: install.registry, conditions: conditions(true, now) });
      return;
    }
    if (st.observedDeploymentID === id && st.phase === 'Deployed') return;
    // The new components take deployMs to come up, counted from when the rollout was first seen.
    let rollout = rollouts.get(key);
    if (rollout?.id !== id) {
      clock.clearTimeout(rollout?.timer);
      rollout = { id, dueMs: clock.nowMs() + deployMs, timer: clock.setTimeout(() => worker.add(key), deployMs) };
      rollouts.set(key, rollout);
    }
    if (clock.nowMs() < rollout.dueMs) return;
    rollouts.delete(key);
    await patchStatus(kv, { phase: 'Deployed', observedDeploymentID: id, observedKubeVirtVersion: install.tag, observedKubeVirtRegistry: install.registry, conditions: conditions(false, now) });
  };

  const worker = new KeyWorker(async (key) => {
    try {
      await handle(key);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }, { concurrency: 1, onError: (k, e) => opts.onError?.(`virt-operator ${k}`, e) });
  const crs: Informer<KubeVirtCr> = api.informers.informer<KubeVirtCr>({
    path: '/apis/kubevirt.io/v1/kubevirts',
    list: async () => (await api.custom.listClusterCustomObject(KUBEVIRTS)) as RawList<KubeVirtCr>,
    onError: (e) => opts.onError?.('virt-operator informer', e),
    onEvent: (event, kv) => {
      if (event === 'delete') {
        clock.clearTimeout(rollouts.get(keyOf(kv))?.timer);
        rollouts.delete(keyOf(kv));
      } else worker.add(keyOf(kv));
    },
  });
  await crs.start();
  return {
    async stop() {
      await worker.stop();
      for (const r of rollouts.values()) clock.clearTimeout(r.timer);
      rollouts.clear();
      await crs.stop();
    },
  };
}

/** Starts an upgrade the way an admin does: a new image tag (and registry) on the KubeVirt CR. */
export async function upgradeKubeVirt(api: NodeSideApi, to: { imageTag: string; imageRegistry?: string }, cr = { namespace: 'kubevirt', name: 'kubevirt' }): Promise<void> {
  await api.custom.patchNamespacedCustomObject({ ...KUBEVIRTS, ...cr, body: { spec: to } }, MERGE_PATCH);
}
