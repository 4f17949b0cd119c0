/**
 * virt-api's pod eviction admission (`pod-eviction-admitter.go`, reference node-drain-updates
 * §2.5), which the sandbox plays as part of the KubeVirt cluster it simulates: evicting the
 * launcher pod of a VMI whose eviction strategy migrates is refused with 429 and marks the VMI
 * (`status.evacuationNodeName`, and the descheduler annotation when the descheduler asked), so the
 * evacuation controller migrates it; `kubectl drain` retries until the pod is gone. Every other
 * pod evicts normally. This file is the decision, pure; the API server adapter applies it.
 */
import { EVICTION_SOURCE_ANNOTATION, evictionStrategyOf, isMarkedForEviction, isMigratable } from '../../shared/api/vmi-eviction.ts';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';

/**
 * Who virt-api reads and writes the mark as, on both lanes (the audit log tells it from the
 * controllers). On the real lane its user is virt-api's ServiceAccount and its role is minimal
 * (sandbox/real/identities.ts).
 */
export const VIRT_API_IDENTITY = 'virt-api';

/** The descheduler's annotation on its Eviction objects. */
export const REQUESTED_BY_ANNOTATION = 'requested-by';
export const DESCHEDULER = 'sigs.k8s.io/descheduler';

interface PodView {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { nodeName?: string };
  status?: { phase?: string };
}

export type EvictionVerdict =
  | { kind: 'allow' }
  | { kind: 'deny'; message: string }
  /** Write the mark (a JSON patch on the VMI, skipped on dry-run), then deny. */
  | { kind: 'mark'; patch: { op: 'add'; path: string; value: unknown }[]; message: string };

/** The VMI the launcher pod runs, by the pod's `kubevirt.io/domain` annotation; undefined: not a live launcher. */
export function launcherVmiName(pod: PodView): string | undefined {
  if (pod.metadata?.labels?.['kubevirt.io'] !== 'virt-launcher') return undefined;
  if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') return undefined;
  return pod.metadata.annotations?.['kubevirt.io/domain'];
}

export function admitEviction(pod: PodView, vmi: VirtualMachineInstance | undefined, eviction: { metadata?: { annotations?: Record<string, string> } }, clusterStrategy: string | undefined): EvictionVerdict {
  if (!vmi || launcherVmiName(pod) === undefined) return { kind: 'allow' };
  const strategy = evictionStrategyOf(vmi, clusterStrategy);
  const migratable = isMigratable(vmi);
  const ref = `"${vmi.metadata?.namespace ?? ''}/${vmi.metadata?.name ?? ''}"`;
  if (strategy === 'LiveMigrate' && !migratable) {
    return { kind: 'deny', message: `VMI ${vmi.metadata?.name ?? ''} is configured with an eviction strategy but is not live-migratable` };
  }
  const marks = strategy === 'LiveMigrate' || strategy === 'External' || (strategy === 'LiveMigrateIfPossible' && migratable);
  if (!marks) return { kind: 'allow' };
  if (isMarkedForEviction(vmi)) return { kind: 'deny', message: `Evacuation in progress: Eviction triggered evacuation of VMI ${ref}` };
  if (vmi.status?.nodeName !== pod.spec?.nodeName) return { kind: 'deny', message: 'Eviction request for target Pod' };
  const patch: { op: 'add'; path: string; value: unknown }[] = [{ op: 'add', path: '/status/evacuationNodeName', value: pod.spec?.nodeName ?? '' }];
  if (eviction.metadata?.annotations?.[REQUESTED_BY_ANNOTATION] === DESCHEDULER) {
    patch.push(vmi.metadata?.annotations
      ? { op: 'add', path: `/metadata/annotations/${EVICTION_SOURCE_ANNOTATION.replace('/', '~1')}`, value: 'descheduler' }
      : { op: 'add', path: '/metadata/annotations', value: { [EVICTION_SOURCE_ANNOTATION]: 'descheduler' } });
  }
  return { kind: 'mark', patch, message: `Eviction triggered evacuation of VMI ${ref}` };
}
