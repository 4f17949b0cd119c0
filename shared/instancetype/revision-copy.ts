/**
 * The instance type and preference ControllerRevisions a VM names (`spec.instancetype|preference
 * .revisionName`), carried through a snapshot and back by a restore
 * (reference-snapshot-export-backup §1.4 and §2.7 step 5): the snapshot copies each revision under
 * the name with the VM's name replaced by the snapshot's (first occurrence), owned by the
 * snapshot; the restore copies it back with the snapshot's name replaced by the target VM's, and
 * the target VM then takes controller ownership of it.
 */
import type { V1ControllerRevision } from '@kubernetes/client-node';
import { CONTROLLER_REVISIONS } from '../api/resources.ts';
import { TransientError } from '../errors.ts';
import type { KubeClient } from '../kube/client.ts';
import { AlreadyExistsError } from '../kube/errors.ts';

/** The two matchers of a VM spec that name a revision. */
export const REVISION_MATCHERS = ['instancetype', 'preference'] as const;

/** A spec with the matchers (a VM spec or a snapshot's copy of one). */
export interface MatcherSpec {
  instancetype?: { revisionName?: string };
  preference?: { revisionName?: string };
}

/** Owner of a copied revision. */
export interface RevisionOwner {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
}

/** `name` with the first occurrence of `from` replaced by `to`, as upstream renames revisions. */
export function renamedRevision(name: string, from: string, to: string): string {
  return from === '' ? name : name.replace(from, to);
}

/**
 * Copies every revision `spec` names to its renamed name (AlreadyExists is fine) and returns the
 * spec naming the copies. A revision that is gone is a transient error: the VM controller writes
 * it, and a pass after it has does the copy.
 */
export async function copyRevisions<S extends MatcherSpec>(
  kube: Pick<KubeClient, 'get' | 'create'>,
  namespace: string,
  spec: S,
  rename: { from: string; to: string },
  owner?: RevisionOwner,
): Promise<S> {
  const out: S = structuredClone(spec);
  for (const m of REVISION_MATCHERS) {
    const name = spec[m]?.revisionName;
    if (!name) continue;
    const copyName = renamedRevision(name, rename.from, rename.to);
    if (copyName !== name) {
      const rev = await kube.get(CONTROLLER_REVISIONS, namespace, name);
      if (!rev) throw new TransientError('RevisionMissing', `${m} ControllerRevision ${namespace}/${name} does not exist`);
      const copy: V1ControllerRevision = {
        apiVersion: 'apps/v1',
        kind: 'ControllerRevision',
        metadata: {
          name: copyName,
          namespace,
          ...(rev.metadata?.labels ? { labels: rev.metadata.labels } : {}),
          ...(owner ? { ownerReferences: [{ ...owner, controller: true, blockOwnerDeletion: true }] } : {}),
        },
        data: rev.data,
        revision: rev.revision,
      };
      try {
        await kube.create(CONTROLLER_REVISIONS, copy);
      } catch (err) {
        if (!(err instanceof AlreadyExistsError)) throw err;
      }
    }
    out[m] = { ...out[m], revisionName: copyName };
  }
  return out;
}

/** The target VM takes controller ownership of the revisions its spec names (those not owned yet). */
export async function adoptRevisions(kube: Pick<KubeClient, 'get' | 'patch'>, namespace: string, spec: MatcherSpec, owner: RevisionOwner): Promise<void> {
  for (const m of REVISION_MATCHERS) {
    const name = spec[m]?.revisionName;
    if (!name) continue;
    const rev = await kube.get(CONTROLLER_REVISIONS, namespace, name);
    if (!rev || (rev.metadata?.ownerReferences ?? []).some((r) => r.controller)) continue;
    await kube.patch(CONTROLLER_REVISIONS, namespace, name, { type: 'merge', body: { metadata: { ownerReferences: [{ ...owner, controller: true, blockOwnerDeletion: true }] } } });
  }
}
