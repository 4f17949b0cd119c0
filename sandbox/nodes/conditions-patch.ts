/**
 * A JSON patch that sets one condition in `/status/conditions` and fails (422) if the list moved
 * under us, instead of a merge patch that would replace the whole list and drop a condition
 * another writer (e.g. the VMI controller's readiness gate) just added.
 */
import { conditionOf, withCondition, type Condition } from './objects.ts';

export type JsonPatchOp = { op: 'add' | 'replace' | 'test' | 'remove'; path: string; value?: unknown };

/** Ops that turn `current` into `withCondition(current, next)`; empty when nothing changes. */
export function setConditionOps(current: Condition[] | undefined, next: Condition): JsonPatchOp[] {
  const old = conditionOf(current, next.type);
  if (old && old.status === next.status && old.reason === next.reason && old.message === next.message) return [];
  const merged = withCondition(current, next).find((c) => c.type === next.type)!;
  if (!current) return [{ op: 'add', path: '/status/conditions', value: [merged] }];
  const i = current.findIndex((c) => c.type === next.type);
  if (i < 0) return [{ op: 'add', path: '/status/conditions/-', value: merged }];
  return [
    { op: 'test', path: `/status/conditions/${i}/type`, value: next.type },
    { op: 'replace', path: `/status/conditions/${i}`, value: merged },
  ];
}
