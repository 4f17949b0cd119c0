/**
 * A VMI from a parsed manifest: a VirtualMachineInstance as is, or a VirtualMachine's
 * `spec.template` named after the VM (what the VM controller would create, minus instancetype
 * and preference expansion, which the notes mention).
 */
import type { VirtualMachineInstance } from '../api/index.ts';
import { InvalidInputError } from '../errors.ts';

export interface ManifestVmi {
  vmi: VirtualMachineInstance;
  /** Things a person should know about the conversion. */
  notes: string[];
}

/** Converts a VMI or VM manifest (already parsed from YAML/JSON) into a VMI. */
export function vmiFromManifest(doc: Record<string, unknown>): ManifestVmi {
  const notes: string[] = [];
  if (typeof doc['spec'] !== 'object' || doc['spec'] === null) throw new InvalidInputError('spec', 'is required');
  if (doc['kind'] === 'VirtualMachineInstance') return { vmi: doc as unknown as VirtualMachineInstance, notes };
  if (doc['kind'] !== 'VirtualMachine') throw new InvalidInputError('kind', `expected VirtualMachineInstance or VirtualMachine, got '${String(doc['kind'])}'`);
  const meta = (doc['metadata'] ?? {}) as { name?: string; namespace?: string };
  const spec = doc['spec'] as { template?: { metadata?: Record<string, unknown>; spec?: unknown }; instancetype?: unknown; preference?: unknown };
  if (typeof spec.template?.spec !== 'object' || spec.template.spec === null) throw new InvalidInputError('spec.template.spec', 'is required');
  if (spec.instancetype || spec.preference) notes.push('the VM references an instancetype/preference, which is not expanded: rendering its template as written');
  const vmi = {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { ...(spec.template.metadata ?? {}), ...(meta.name && { name: meta.name }), ...(meta.namespace && { namespace: meta.namespace }) },
    spec: structuredClone(spec.template.spec),
  } as unknown as VirtualMachineInstance;
  return { vmi, notes };
}
