/**
 * What one live-update handler decides (reference-vm-vmi-depth §5), and the JSON-patch ops the
 * handlers share. Pure.
 */
import type { JsonPatchOperation } from '../../../shared/kube/client.ts';

/**
 * - `none`: nothing to do;
 * - `restart`: the change cannot be applied live, the VM gets `RestartRequired` with `message`;
 * - `error`: not now (a hotplug or migration in progress), a sync error with `message`;
 * - `patch`: JSON-patch the VMI spec with `ops`.
 */
export type LiveChange =
  | { readonly kind: 'none' }
  | { readonly kind: 'restart'; readonly message: string }
  | { readonly kind: 'error'; readonly message: string }
  | { readonly kind: 'patch'; readonly ops: readonly JsonPatchOperation[] };

export const NONE: LiveChange = { kind: 'none' };
export const restart = (message: string): LiveChange => ({ kind: 'restart', message });
export const refuse = (message: string): LiveChange => ({ kind: 'error', message });

/** `test` the old value (JSON-patch v4: a missing key tests equal to null), then `replace` it. */
export function testReplace(path: string, before: unknown, after: unknown): JsonPatchOperation[] {
  return [{ op: 'test', path, value: before ?? null }, { op: 'replace', path, value: after }];
}

/**
 * The affinity / nodeSelector / tolerations ops: `add` when the VMI has none, `remove` (after a
 * `test`) when the template has none, `test` + `replace` otherwise.
 */
export function syncFieldOps(path: string, vmiValue: unknown, templateValue: unknown): JsonPatchOperation[] {
  if (vmiValue === undefined || vmiValue === null) return [{ op: 'add', path, value: templateValue }];
  if (templateValue === undefined || templateValue === null) return [{ op: 'test', path, value: vmiValue }, { op: 'remove', path }];
  return testReplace(path, vmiValue, templateValue);
}
