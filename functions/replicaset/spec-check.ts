/**
 * The replica set's own preconditions (reference-replicas-pools-clones.md §1.2 steps 2–3): the
 * API-version annotations KubeVirt stamps before anything else, and the specs it drops silently.
 */
import type { LabelSelector, VirtualMachineInstanceReplicaSet } from '../../shared/api/index.ts';
import { LATEST_OBSERVED_API_VERSION_ANNOTATION, STORAGE_OBSERVED_API_VERSION_ANNOTATION } from '../../shared/api/well-known.ts';
import { selectorMatches, validateSelector } from '../../shared/predicates/label-selector.ts';
import { errorText } from '../../shared/errors.ts';

/** The version both annotations carry. */
export const OBSERVED_API_VERSION = 'v1';

/** The replica set with both API-version annotations set, or undefined when it already has them. */
export function withApiVersionAnnotations(rs: VirtualMachineInstanceReplicaSet): VirtualMachineInstanceReplicaSet | undefined {
  if (rs.metadata?.annotations?.[LATEST_OBSERVED_API_VERSION_ANNOTATION] === OBSERVED_API_VERSION) return undefined;
  return {
    ...rs,
    metadata: {
      ...rs.metadata,
      annotations: { ...rs.metadata?.annotations, [LATEST_OBSERVED_API_VERSION_ANNOTATION]: OBSERVED_API_VERSION, [STORAGE_OBSERVED_API_VERSION_ANNOTATION]: OBSERVED_API_VERSION },
    },
  };
}

export type SpecCheck = { readonly kind: 'valid'; readonly selector: LabelSelector } | { readonly kind: 'invalid'; readonly why: string };

/** Template and selector present, template labelled, selector parsable and matching the template's labels. */
export function checkSpec(rs: VirtualMachineInstanceReplicaSet): SpecCheck {
  const { template, selector } = rs.spec ?? {};
  if (!template) return { kind: 'invalid', why: 'spec.template is not set' };
  if (!selector) return { kind: 'invalid', why: 'spec.selector is not set' };
  const labels = template.metadata?.labels;
  if (!labels || Object.keys(labels).length === 0) return { kind: 'invalid', why: 'spec.template.metadata.labels is empty' };
  try {
    validateSelector(selector, 'spec.selector');
  } catch (err) {
    return { kind: 'invalid', why: errorText(err) };
  }
  if (!selectorMatches(selector, labels)) return { kind: 'invalid', why: 'spec.selector does not match the template labels' };
  return { kind: 'valid', selector };
}

/** `spec.replicas`, 1 when unset. */
export function desiredReplicas(rs: VirtualMachineInstanceReplicaSet): number {
  return rs.spec?.replicas ?? 1;
}
