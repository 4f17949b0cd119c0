/**
 * Events the simulated kubelet and virt-handler record, as client-go's event recorder writes them
 * (core/v1 Events with `source`, `reportingComponent`, `count`): the first occurrence is created,
 * a repeat of the same (object, type, reason, message) bumps `count` and `lastTimestamp` on the
 * same Event — at most once per `repeatMs` of simulated time, the rest counted in between, as the
 * recorder's correlator aggregates and rate-limits a sync loop that fails the same way again and
 * again. Failures to write are reported, never thrown: an event is best effort, as upstream.
 */
import { createHash } from 'node:crypto';
import { MERGE_PATCH, statusCodeOf, type NodeSideApi } from './api.ts';
import type { KubeObject } from './objects.ts';
import type { Clock } from '../clock.ts';

export type EventType = 'Normal' | 'Warning';

/** Who records: `kubelet`, `virt-handler`, `attachdetach-controller`… and on which node. */
export interface EventSource {
  component: string;
  host?: string;
}

interface Recorded {
  name: string;
  namespace: string;
  count: number;
  written: number;
  lastWriteMs: number;
}

export interface EventRecorder {
  record(obj: KubeObject, type: EventType, reason: string, message: string, source: EventSource): void;
  /** Resolves once every write started so far has finished (tests, stop). */
  flush(): Promise<void>;
}

const MAX_SERIES = 4096;
const KIND_API: Record<string, string> = { Pod: 'v1', Node: 'v1', VirtualMachineInstance: 'kubevirt.io/v1' };

export function createEventRecorder(api: NodeSideApi, clock: Clock, onError?: (what: string, err: unknown) => void, repeatMs = 10_000): EventRecorder {
  const seen = new Map<string, Recorded>();
  const inFlight = new Set<Promise<void>>();

  const write = async (obj: KubeObject, kind: string, type: EventType, reason: string, message: string, source: EventSource, rec: Recorded, first: boolean) => {
    const now = clock.isoNow();
    const { namespace = 'default', name = '', uid, resourceVersion } = obj.metadata ?? {};
    if (first) {
      const body = {
        metadata: { name: rec.name, namespace: rec.namespace },
        involvedObject: { kind, namespace, name, uid, apiVersion: obj.apiVersion ?? KIND_API[kind] ?? 'v1', resourceVersion },
        reason,
        message,
        type,
        source: { component: source.component, ...(source.host ? { host: source.host } : {}) },
        reportingComponent: source.component,
        reportingInstance: source.host ?? '',
        firstTimestamp: now,
        lastTimestamp: now,
        count: rec.count,
      };
      try {
        await api.core.createNamespacedEvent({ namespace: rec.namespace, body: body as never });
        return;
      } catch (err) {
        if (statusCodeOf(err) !== 409) throw err;
      }
    }
    await api.core.patchNamespacedEvent({ namespace: rec.namespace, name: rec.name, body: { count: rec.count, lastTimestamp: now } }, MERGE_PATCH);
  };

  return {
    record(obj, type, reason, message, source) {
      const kind = obj.kind ?? 'Pod';
      const uid = obj.metadata?.uid ?? `${obj.metadata?.namespace}/${obj.metadata?.name}`;
      const key = `${uid}\u0000${type}\u0000${reason}\u0000${message}\u0000${source.component}`;
      const nowMs = clock.nowMs();
      let rec = seen.get(key);
      const first = rec === undefined;
      if (!rec) {
        const suffix = createHash('sha256').update(`${key}\u0000${nowMs}`).digest('hex').slice(0, 16);
        rec = { name: `${obj.metadata?.name ?? 'object'}.${suffix}`, namespace: obj.metadata?.namespace || 'default', count: 0, written: 0, lastWriteMs: -Infinity };
        seen.set(key, rec);
        // Bounded like the correlator's LRU cache: the oldest series are forgotten first.
        if (seen.size > MAX_SERIES) seen.delete(seen.keys().next().value!);
      }
      rec.count++;
      if (!first && nowMs - rec.lastWriteMs < repeatMs) return;
      rec.lastWriteMs = nowMs;
      const p = write(obj, kind, type, reason, message, source, rec, first)
        .catch((err: unknown) => onError?.(`event ${reason} on ${kind} ${obj.metadata?.name ?? ''}`, err))
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    },
    async flush() {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}
