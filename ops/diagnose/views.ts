/**
 * The few fields of cluster objects the verdicts read, as small plain records (so the verdicts
 * are pure and table-tested without whole Kubernetes objects), and the converters from what the
 * client returns. Missing fields read as empty, never as errors.
 */

/** A condition as the verdicts read it. */
export interface ConditionView {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
}

export interface EventView {
  readonly type: string;
  readonly reason: string;
  readonly message: string;
  readonly count: number;
  /** Epoch ms of the last occurrence. */
  readonly lastAt: number;
}

export interface PodView {
  readonly name: string;
  readonly phase: string;
  readonly nodeName?: string;
  /** The PodScheduled condition, when the scheduler has said something. */
  readonly scheduled?: ConditionView;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly deleting: boolean;
}

/** What any object's metadata says, loosely typed (core objects carry `Date`s, custom ones strings). */
export interface Meta {
  readonly name?: string | undefined;
  readonly namespace?: string | undefined;
  readonly uid?: string | undefined;
  readonly resourceVersion?: string | undefined;
  readonly creationTimestamp?: string | Date | undefined;
  readonly deletionTimestamp?: string | Date | undefined;
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly annotations?: Readonly<Record<string, string>> | undefined;
}

/** An object as the converters read it. */
export interface Raw {
  readonly metadata?: Meta | undefined;
}

/** A timestamp (string or Date) as epoch ms; 0 when absent or unreadable. */
export function epoch(t: string | Date | undefined): number {
  if (t === undefined) return 0;
  const ms = (t instanceof Date ? t : new Date(t)).getTime();
  return Number.isFinite(ms) ? ms : 0;
}

export function conditionView(c: { type?: string; status?: string; reason?: string; message?: string }): ConditionView {
  return { type: c.type ?? '', status: c.status ?? '', ...(c.reason ? { reason: c.reason } : {}), ...(c.message ? { message: c.message } : {}) };
}

export function podView(raw: Raw & { spec?: { nodeName?: string }; status?: { phase?: string; conditions?: { type?: string; status?: string; reason?: string; message?: string }[] } }): PodView {
  const scheduled = raw.status?.conditions?.find((c) => c.type === 'PodScheduled');
  const nodeName = raw.spec?.nodeName;
  return {
    name: raw.metadata?.name ?? '',
    phase: raw.status?.phase ?? 'Pending',
    ...(nodeName ? { nodeName } : {}),
    ...(scheduled ? { scheduled: conditionView(scheduled) } : {}),
    createdAt: epoch(raw.metadata?.creationTimestamp),
    deleting: raw.metadata?.deletionTimestamp !== undefined,
  };
}

export function eventView(raw: unknown): EventView {
  const r = raw as Raw & { type?: string; reason?: string; message?: string; count?: number; lastTimestamp?: string | Date; eventTime?: string | Date };
  return { type: r.type ?? 'Normal', reason: r.reason ?? '', message: r.message ?? '', count: r.count ?? 1, lastAt: epoch(r.lastTimestamp ?? r.eventTime ?? r.metadata?.creationTimestamp) };
}
