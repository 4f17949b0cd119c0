/**
 * What the VMI's owning virt-handler writes on every status update, and how it finds its launcher,
 * as pure functions (KubeVirt `pkg/virt-handler/vm.go` `updateVMIStatus`, `updateSELinuxContext`,
 * `updateLiveMigrationConditions`, `handleSyncError`; `pkg/controller/conditions.go`
 * `CheckFailure`; `launcher-clients.go` `IsLauncherClientUnresponsive`).
 */
import { goVmiCondition, type Condition, type Pod, type Vmi } from './objects.ts';
import { liveMigratable, storageLiveMigratable, withMigratability, type HandlerConfig } from './vmi-migratable.ts';

/** The condition reason KubeVirt gives every handler sync error. */
export const SYNC_FAILED_REASON = 'Synchronizing with the Domain failed.';
/** How long a launcher socket may take to appear before the launcher counts as unresponsive. */
export const LAUNCHER_SOCKET_TIMEOUT_MS = 180_000;

/** The label virt-handler's informer selects VMIs by. */
export const NODE_NAME_LABEL = 'kubevirt.io/nodeName';

/**
 * The fields written on every update, failing or not: `selinuxContext` (the node's: "none" on a
 * node without SELinux, the sandbox's default; `''` means the handler never writes it), both
 * migratability conditions, `migrationMethod`. Answers the changed fields only (empty when
 * nothing differs).
 */
export function everyUpdateFields(vmi: Vmi, config: HandlerConfig, nodeLabels: Record<string, string> | undefined, selinuxContext = 'none'): Record<string, unknown> {
  const live = liveMigratable({ vmi, config, nodeLabels });
  const storage = storageLiveMigratable({ vmi, config, nodeLabels });
  const conditions = withMigratability(vmi.status?.conditions ?? [], live.condition, storage);
  const method = live.block ? 'BlockMigration' : 'LiveMigration';
  const out: Record<string, unknown> = {};
  if (selinuxContext !== '' && vmi.status?.['selinuxContext'] !== selinuxContext) out['selinuxContext'] = selinuxContext;
  if (vmi.status?.['migrationMethod'] !== method) out['migrationMethod'] = method;
  if (!sameConditions(conditions, vmi.status?.conditions ?? [])) out['conditions'] = conditions;
  return out;
}

/** The same conditions once both are written as Go writes them (goVmiCondition): no write is due. */
export function sameConditions(a: readonly Condition[], b: readonly Condition[]): boolean {
  return JSON.stringify(a.map(goVmiCondition)) === JSON.stringify(b.map(goVmiCondition));
}

/**
 * `CheckFailure`: `Synchronized=False` with the handler's reason and the error as message — not
 * rewritten while a condition with that reason is there (the first error's message stays).
 */
export function withSyncFailure(conditions: readonly Condition[], message: string, nowIso: string): Condition[] {
  const old = conditions.find((c) => c.type === 'Synchronized');
  if (old?.reason === SYNC_FAILED_REASON) return [...conditions];
  return [...conditions.filter((c) => c.type !== 'Synchronized'), { type: 'Synchronized', status: 'False', reason: SYNC_FAILED_REASON, message, lastProbeTime: null, lastTransitionTime: nowIso }];
}

/** A successful sync removes the handler's `Synchronized` failure. */
export function withoutSyncFailure(conditions: readonly Condition[]): Condition[] {
  return conditions.filter((c) => !(c.type === 'Synchronized' && c.reason === SYNC_FAILED_REASON));
}

/** Pod UIDs of `status.activePods` on `host`. */
export function activePodUidsOn(vmi: Vmi, host: string): string[] {
  const active = (vmi.status?.['activePods'] ?? {}) as Record<string, string>;
  return Object.entries(active).filter(([, node]) => node === host).map(([uid]) => uid);
}

/**
 * What the handler's launcher client finds: the launcher pod reached through `status.activePods`
 * on this node (`ready` once its `compute` container runs and its socket is there), `starting`
 * (the pod directory exists, the socket not yet), or `gone` — no local entry, the pod vanished,
 * or its `compute` container ended (the socket is gone): the launcher is unresponsive.
 */
export function launcherState(vmi: Vmi, host: string, podByUid: (uid: string) => Pod | undefined): { state: 'ready' | 'starting'; pod: Pod } | { state: 'gone' } {
  for (const uid of activePodUidsOn(vmi, host)) {
    const pod = podByUid(uid);
    if (!pod || pod.spec?.nodeName !== host) continue;
    const compute = pod.status?.containerStatuses?.find((c) => c.name === 'compute');
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed' || compute?.state?.terminated !== undefined) return { state: 'gone' };
    if (compute?.state?.running !== undefined) return { state: 'ready', pod };
    return { state: 'starting', pod };
  }
  return { state: 'gone' };
}

/** When the VMI became `Scheduled` (its phase transition), epoch ms. */
export function scheduledAtMs(vmi: Vmi): number | undefined {
  const ts = ((vmi.status?.['phaseTransitionTimestamps'] ?? []) as { phase?: string; phaseTransitionTimestamp?: string }[]).filter((t) => t.phase === 'Scheduled').pop();
  const ms = ts?.phaseTransitionTimestamp ? Date.parse(ts.phaseTransitionTimestamp) : NaN;
  return Number.isNaN(ms) ? undefined : ms;
}
