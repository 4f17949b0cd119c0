/**
 * What the chaos scenarios share (controller-scenarios.ts, storage-scenarios.ts): a scenario's
 * shape, waiting with a violation when a state is never reached, and the claims and VMs they use.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { IMMEDIATE_CLASS } from '../../sandbox/storage/classes.ts';
import type { SandboxOptions } from '../../sandbox/sandbox.ts';
import type { VirtualMachine } from '../../shared/api/index.ts';
import { PVCS, VMS } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Controller } from '../../shared/queue/message.ts';
import { vmManifest } from '../e2e/support.ts';
import type { Rig } from './rig.ts';

export const NS = 'default';

/** What a scenario hands back: what it checked, and what broke. */
export interface ScenarioResult {
  readonly checked: string;
  readonly violations: string[];
}

export interface Scenario {
  readonly name: string;
  /** The controllers it needs running. */
  readonly controllers: readonly Controller[];
  readonly sandbox?: SandboxOptions;
  /** Probability per call that a worker dies, when the run does not set one: higher for a scenario of few calls, so that it kills some. */
  readonly killRate?: number;
  /** Runs before the workers start (cluster configuration the controllers read once). */
  readonly prepare?: (user: KubeClient) => Promise<void>;
  readonly run: (rig: Rig, say: (line: string) => void) => Promise<ScenarioResult>;
}

/** Polls `cond` every 100 ms until it holds or `ms` pass. */
export async function within(ms: number, cond: () => Promise<boolean>): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    if (await cond().catch(() => false)) return true;
    await sleep(100);
  }
  return false;
}

/** Waits, recording `what` as a violation when it never holds. */
export async function reach(out: string[], what: string, cond: () => Promise<boolean>, ms = 120_000): Promise<boolean> {
  const ok = await within(ms, cond);
  if (!ok) out.push(`never reached: ${what}`);
  return ok;
}

export const claim = (name: string): V1PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: NS },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: IMMEDIATE_CLASS },
});

/** A VM on a container disk and claim `<name>-data`. */
export async function vmWithClaim(user: KubeClient, name: string, runStrategy: string): Promise<void> {
  await user.create(PVCS, claim(`${name}-data`));
  const vm = vmManifest(name, { runStrategy } as Partial<VirtualMachine['spec']>);
  const t = vm.spec.template.spec!;
  t.domain.devices.disks = [...(t.domain.devices.disks ?? []), { name: 'data', disk: { bus: 'virtio' } }];
  t.volumes = [...(t.volumes ?? []), { name: 'data', persistentVolumeClaim: { claimName: `${name}-data` } }];
  await user.create(VMS, vm);
}
