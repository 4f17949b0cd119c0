/**
 * DataVolume clone authorization (KubeVirt's handleCloneDataVolume + CDI's AuthorizeSA): before
 * the VM controller creates a DataVolume that clones a claim or a snapshot from another
 * namespace, the VM's service account must be allowed to clone from there, asked of the API
 * server with SubjectAccessReviews as that account. A source claim that does not exist (yet) is
 * only worth an event: the DataVolume waits for it.
 */
import type { V1SubjectAccessReviewSpec } from '@kubernetes/client-node';
import type { DataVolume, VirtualMachine } from '../../shared/api/index.ts';
import { DATA_SOURCES, NAMESPACES, PVCS, SUBJECT_ACCESS_REVIEWS } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';

/** CDI: a DataVolume so annotated needs no clone token, so a refusal (or no source namespace) lets it through. */
const NO_TOKEN_ANNOTATIONS = ['cdi.kubevirt.io/storage.prePopulated', 'cdi.kubevirt.io/storage.checkStaticVolume'];

/** The service account a VM's pods run as: the template's, else a serviceAccount volume's, else `default`. */
export function vmServiceAccount(vm: VirtualMachine): string {
  const spec = vm.spec.template.spec;
  return spec?.serviceAccountName || spec?.volumes?.find((v) => v.serviceAccount)?.serviceAccount?.serviceAccountName || 'default';
}

type ResourceAttributes = NonNullable<V1SubjectAccessReviewSpec['resourceAttributes']>;

/** What the SubjectAccessReviews ask (CDI): any one of them allows a claim clone; a snapshot clone needs the first, or all the others. */
function reviews(kind: 'pvc' | 'snapshot', namespace: string, name: string): { any: ResourceAttributes[]; all: ResourceAttributes[] } {
  const source: ResourceAttributes = { namespace, verb: 'create', group: 'cdi.kubevirt.io', resource: 'datavolumes', subresource: 'source', name };
  const pods: ResourceAttributes = { namespace, verb: 'create', resource: 'pods', name };
  if (kind === 'pvc') return { any: [source, pods], all: [] };
  return { any: [source], all: [pods, { namespace, verb: 'create', resource: 'pvcs', name }] };
}

/**
 * The DataVolume as KubeVirt creates it from its template (GetResolvedCloneSource): a `sourceRef`
 * to a DataSource replaced by the claim or snapshot that DataSource points at (its resolved
 * `status.source` when it points at another DataSource), and a clone source without a namespace
 * given the VM's (or the DataSource's). `error` (KubeVirt's message) when the DataSource is not there.
 */
export async function resolveCloneSource(kube: Pick<KubeClient, 'get'>, vmNamespace: string, dv: DataVolume): Promise<{ dv: DataVolume } | { error: string }> {
  let ns = vmNamespace;
  let source = dv.spec.source;
  const ref = dv.spec.sourceRef;
  if (ref?.kind === 'DataSource') {
    if (ref.namespace !== undefined) ns = ref.namespace;
    const ds = await kube.get(DATA_SOURCES, ns, ref.name);
    if (!ds) return { error: `unable to create DataVolume manifest: datasources.cdi.kubevirt.io "${ref.name}" not found` };
    const resolved = ds.spec?.source?.dataSource ? ds.status?.source : ds.spec?.source;
    source = { ...(resolved?.pvc ? { pvc: { ...resolved.pvc } } : {}), ...(resolved?.snapshot ? { snapshot: { ...resolved.snapshot } } : {}) };
  }
  // Only a clone source is resolved; anything else leaves the DataVolume as its template says.
  if (source?.pvc) source = { pvc: { ...source.pvc, namespace: source.pvc.namespace || ns } };
  else if (source?.snapshot) source = { snapshot: { ...source.snapshot, namespace: source.snapshot.namespace || ns } };
  else return { dv };
  const spec = { ...dv.spec, source };
  delete spec.sourceRef;
  return { dv: { ...dv, spec } };
}

export interface CloneCheck {
  /** KubeVirt's warning that the source claim is missing (the DataVolume is created anyway). */
  readonly sourceMissing?: string;
  /** Why the DataVolume may not be created (KubeVirt's message, without the event's prefix), or undefined. */
  readonly refused?: string;
}

/**
 * Checks a DataVolume about to be created for `vm` (its clone source resolved first:
 * {@link resolveCloneSource}). Sources that are not clones need nothing.
 */
export async function checkClone(kube: Pick<KubeClient, 'get' | 'create'>, vm: VirtualMachine, dv: DataVolume): Promise<CloneCheck> {
  const vmNamespace = vm.metadata?.namespace ?? '';
  const pvc = dv.spec.source?.pvc;
  const snapshot = dv.spec.source?.snapshot;
  const source = pvc ?? snapshot;
  if (!source?.name) return {};
  const sourceNamespace = source.namespace || vmNamespace;
  let sourceMissing: string | undefined;
  if (pvc && !(await kube.get(PVCS, sourceNamespace, pvc.name))) {
    sourceMissing = `Source PVC ${pvc.name} not available: Target PVC ${dv.metadata?.name ?? ''} will remain unpopulated until source is created`;
  }
  const refused = await refusal(kube, vm, dv, pvc ? 'pvc' : 'snapshot', sourceNamespace, source.name);
  return { ...(sourceMissing ? { sourceMissing } : {}), ...(refused ? { refused } : {}) };
}

async function refusal(kube: Pick<KubeClient, 'get' | 'create'>, vm: VirtualMachine, dv: DataVolume, kind: 'pvc' | 'snapshot', sourceNamespace: string, name: string): Promise<string | undefined> {
  const saNamespace = vm.metadata?.namespace ?? '';
  // The same namespace needs no review.
  if (sourceNamespace === saNamespace) return undefined;
  const noTokenOkay = NO_TOKEN_ANNOTATIONS.some((a) => dv.metadata?.annotations?.[a] !== undefined);
  if (!(await kube.get(NAMESPACES, undefined, sourceNamespace))) return noTokenOkay ? undefined : `namespaces "${sourceNamespace}" not found`;
  const user = `system:serviceaccount:${saNamespace}:${vmServiceAccount(vm)}`;
  const spec = { user, groups: ['system:serviceaccounts', `system:serviceaccounts:${saNamespace}`, 'system:authenticated'] };
  const allowed = async (resourceAttributes: ResourceAttributes) =>
    (await kube.create(SUBJECT_ACCESS_REVIEWS, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { ...spec, resourceAttributes } })).status?.allowed === true;
  const { any, all } = reviews(kind, sourceNamespace, name);
  let ok = false;
  for (const ra of any) if ((ok = await allowed(ra))) break;
  if (!ok && all.length > 0) {
    ok = true;
    for (const ra of all) if (!(ok = await allowed(ra))) break;
  }
  if (ok || noTokenOkay) return undefined;
  return `User ${user} has insufficient permissions in clone source namespace ${sourceNamespace}`;
}
