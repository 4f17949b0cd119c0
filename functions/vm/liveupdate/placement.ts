/**
 * Affinity, nodeSelector and tolerations updates (reference-vm-vmi-depth §5): the expanded
 * template's values are patched into the VMI spec (the target pod of the next migration then
 * schedules by them); not while the VMI migrates. Affinity and nodeSelector are one handler with
 * two patches, tolerations another. Pure.
 */
import { isDeepStrictEqual } from 'node:util';
import type { VirtualMachineInstance, VirtualMachineInstanceSpec } from '../../../shared/api/index.ts';
import { isMigrating } from '../../../shared/api/vmi-eviction.ts';
import { NONE, refuse, syncFieldOps, type LiveChange } from './change.ts';

export interface PlacementInput {
  readonly template: VirtualMachineInstanceSpec;
  readonly vmi: VirtualMachineInstance;
  /** Epoch ms. */
  readonly now: number;
}

/** An empty list or map counts as unset (the API server may keep either). */
const norm = (v: unknown) => (v === undefined || v === null || (typeof v === 'object' && Object.keys(v).length === 0) ? null : v);
const same = (a: unknown, b: unknown) => isDeepStrictEqual(norm(a), norm(b));

/** The nodeSelector and affinity patches (one `patch` per field), or the migration refusal. */
export function affinityChanges({ template, vmi, now }: PlacementInput): LiveChange[] {
  if (vmi.metadata?.deletionTimestamp) return [];
  const selector = !same(template.nodeSelector, vmi.spec.nodeSelector);
  const affinity = !same(template.affinity, vmi.spec.affinity);
  if (!selector && !affinity) return [];
  if (isMigrating(vmi, now)) return [refuse('Node affinity should not be changed during VMI migration')];
  const out: LiveChange[] = [];
  if (selector) out.push({ kind: 'patch', ops: syncFieldOps('/spec/nodeSelector', vmi.spec.nodeSelector, template.nodeSelector) });
  if (affinity) out.push({ kind: 'patch', ops: syncFieldOps('/spec/affinity', vmi.spec.affinity, template.affinity) });
  return out;
}

/** The tolerations patch, or the migration refusal. */
export function tolerationsChange({ template, vmi, now }: PlacementInput): LiveChange {
  if (vmi.metadata?.deletionTimestamp || same(template.tolerations, vmi.spec.tolerations)) return NONE;
  if (isMigrating(vmi, now)) return refuse('tolerations should not be changed during VMI migration');
  return { kind: 'patch', ops: syncFieldOps('/spec/tolerations', vmi.spec.tolerations, template.tolerations) };
}
