/**
 * The chaos scenarios' invariants, replayed from the API server's audit log in commit order (on
 * either lane: the emulator's log, or kube-apiserver's own; both carry the object after each write
 * of pods and kubevirt.io objects, and the name of every other write). Pure functions of the
 * entries, so each can be shown to catch what it is for (audit-invariants.test.ts).
 */
import type { AuditEntry } from '../../sandbox/apiserver/audit.ts';
import { MIGRATION_JOB_UID_LABEL } from '../../shared/api/well-known.ts';
import { inCommitOrder } from '../support/migration-peaks.ts';

type Obj = { metadata?: { name?: string; uid?: string; deletionTimestamp?: string; labels?: Record<string, string>; ownerReferences?: { uid?: string; controller?: boolean }[] } };

/** True when the entry leaves the object alive (not deleted, not terminating). */
export function isLive(e: AuditEntry): boolean {
  return e.type !== 'DELETED' && !(e.object as Obj | undefined)?.metadata?.deletionTimestamp;
}

/** Names of `resource` created more than once (created, deleted, created again: done twice). */
export function createdMoreThanOnce(entries: readonly AuditEntry[], resource: string, names: (name: string) => boolean = () => true): string[] {
  const n = new Map<string, number>();
  for (const e of entries) if (e.resource === resource && !e.subresource && e.verb === 'create' && names(e.name)) n.set(e.name, (n.get(e.name) ?? 0) + 1);
  return [...n].filter(([, c]) => c > 1).map(([name, c]) => `${name} ×${c}`);
}

/** How many objects of `resource` whose name passes `names` were created. */
export function creates(entries: readonly AuditEntry[], resource: string, names: (name: string) => boolean = () => true): number {
  return entries.filter((e) => e.resource === resource && !e.subresource && e.verb === 'create' && names(e.name)).length;
}

/**
 * Replays `resource` and reports every instant where more than `limit` live objects share a group
 * (`groupOf` of the object; undefined leaves it out): "one launcher pod per VMI", "one attachment
 * pod per volume set", "one exporter pod per export".
 */
export function overLimit(entries: readonly AuditEntry[], resource: string, groupOf: (o: Obj) => string | undefined, limit = 1): string[] {
  return new OverLimit(resource, groupOf, limit).feed(entries);
}

/**
 * {@link overLimit} fed in batches (each in commit order, later batches later), keeping what it has
 * replayed: how a long run (the soak) checks every instant while it drops the log it has read.
 */
export class OverLimit {
  readonly #group = new Map<string, string>();
  readonly #live = new Map<string, Set<string>>();
  readonly resource: string;
  readonly groupOf: (o: Obj) => string | undefined;
  readonly limit: number;
  constructor(resource: string, groupOf: (o: Obj) => string | undefined, limit = 1) {
    this.resource = resource;
    this.groupOf = groupOf;
    this.limit = limit;
  }

  /** Replays `entries`; the violations they add. */
  feed(entries: readonly AuditEntry[]): string[] {
    const out: string[] = [];
    for (const e of inCommitOrder(entries)) {
      if (e.resource !== this.resource || e.subresource) continue;
      const g = this.#group.get(e.name) ?? this.groupOf(e.object as Obj);
      if (g === undefined) continue;
      this.#group.set(e.name, g);
      const set = this.#live.get(g) ?? new Set<string>();
      this.#live.set(g, set);
      if (isLive(e)) set.add(e.name);
      else set.delete(e.name);
      if (set.size > this.limit) out.push(`${[...set].join(' + ')} live at once for ${g} (rv ${e.resourceVersion}, ${e.verb} by ${e.identity})`);
    }
    return out;
  }
}

type Vmi = Obj & { status?: { phase?: string; conditions?: { type: string; status: string }[] } };

/** Running and Ready, not terminating: what a pool counts as available. */
export function vmiAvailable(v: Vmi | undefined): boolean {
  return v !== undefined && !v.metadata?.deletionTimestamp && v.status?.phase === 'Running' && v.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

type Vm = Obj & { status?: { conditions?: { type: string; status: string }[] } };

/**
 * Replays the VMI writes from `from` on (entries before it set the initial state): the most of
 * `names` unavailable at one instant, how many instants were replayed, and that worst instant
 * described (the write that made it, each VMI's state: absent, deleting, phase, Ready, and its
 * VM's Ready condition) for the report of a violation.
 *
 * What `maxUnavailable` bounds is KubeVirt's budget: a pool restarts the outdated VMI of a VM whose
 * own Ready condition is not True first and outside the budget (`handleUnhealthyVMIs`; ours
 * functions/pool/update-plan.ts). So a VMI deleted while its VM was not Ready (the VM's status is
 * replayed from the same log) is counted apart — `unbudgeted`, until that VM's VMI is available
 * again — and `worst` counts the others.
 */
export function worstUnavailable(entries: readonly AuditEntry[], names: readonly string[], from: number): { worst: number; instants: number; at: string; unbudgeted: string[] } {
  const vmis = new Map<string, Vmi>();
  const vmReady = new Map<string, boolean>();
  const unbudgeted = new Set<string>();
  const everUnbudgeted: string[] = [];
  let worst = 0;
  let instants = 0;
  let at = '';
  const since = new Set(entries.slice(from));
  const ordered = inCommitOrder(
    entries.filter((e) => names.includes(e.name) && ((e.resource === 'virtualmachineinstances' && !e.subresource) || e.resource === 'virtualmachines')),
  );
  const state = (n: string) => {
    const v = vmis.get(n);
    const vm = vmReady.has(n) ? ` (VM Ready=${vmReady.get(n) ? 'True' : 'False'})` : '';
    if (!v) return `${n} absent${vm}`;
    const ready = v.status?.conditions?.find((c) => c.type === 'Ready') as { status: string; reason?: string } | undefined;
    return `${n} ${v.metadata?.deletionTimestamp ? 'deleting ' : ''}${v.status?.phase ?? '-'} Ready=${ready ? `${ready.status}${ready.reason ? `/${ready.reason}` : ''}` : '-'}${vm}${unbudgeted.has(n) ? ' [restarted outside the budget: its VM was not Ready]' : ''}`;
  };
  for (const e of ordered) {
    if (e.resource === 'virtualmachines') {
      if (e.type === 'DELETED') vmReady.delete(e.name);
      else if (e.object) vmReady.set(e.name, (e.object as Vm).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true);
      continue;
    }
    const before = vmis.get(e.name);
    const wasLive = before !== undefined && !before.metadata?.deletionTimestamp;
    if (e.type === 'DELETED') vmis.delete(e.name);
    else vmis.set(e.name, e.object as Vmi);
    // The write that starts a VMI's deletion, while its VM is not Ready: the unhealthy step's restart.
    if (since.has(e) && wasLive && e.verb === 'delete' && vmReady.get(e.name) === false && !unbudgeted.has(e.name)) {
      unbudgeted.add(e.name);
      everUnbudgeted.push(e.name);
    }
    if (vmiAvailable(vmis.get(e.name))) unbudgeted.delete(e.name);
    if (!since.has(e)) continue;
    instants++;
    const down = names.filter((n) => !vmiAvailable(vmis.get(n)) && !unbudgeted.has(n)).length;
    if (down > worst) {
      worst = down;
      at = `after ${e.identity}'s ${e.verb} of ${e.name} (rv ${e.resourceVersion}): ${names.map(state).join('; ')}`;
    }
  }
  return { worst, instants, at, unbudgeted: everUnbudgeted };
}

/**
 * Launcher pods: grouped by the VMI they run (its uid, the created-by label) and the migration
 * whose target they are (a source and its target run side by side during a migration: one each).
 */
export const launcherOf = (o: Obj): string | undefined => {
  const labels = o.metadata?.labels;
  if (labels?.['kubevirt.io'] !== 'virt-launcher') return undefined;
  const migration = labels[MIGRATION_JOB_UID_LABEL];
  return `${labels['kubevirt.io/created-by'] ?? '?'}${migration ? ` (target of migration ${migration})` : ''}`;
};
