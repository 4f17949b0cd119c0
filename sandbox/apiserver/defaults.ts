/**
 * What the real apiserver's strategies do to a new object before storing it: name generation,
 * name validation, pod defaults and status reset, namespace and PVC initial status.
 */
import { randomInt } from 'node:crypto';
import { badRequest, invalid } from './errors.ts';
import type { ResourceInfo } from './resources.ts';
import { isObject, type KubeObject } from './types.ts';

// Upstream `utilrand.String` alphabet: no vowels, no confusable characters.
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** `prefix` (truncated to 58 chars) + 5 random characters, like `names.SimpleNameGenerator`. */
export function generateName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += ALPHABET[randomInt(ALPHABET.length)];
  return prefix.slice(0, 58) + suffix;
}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** 422 unless `name` is a DNS-1123 subdomain (≤ 253 chars). Events allow any path-safe name. */
export function validateName(res: ResourceInfo, name: string): void {
  if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) {
    throw invalid(res, name, [{ reason: 'FieldValueInvalid', field: 'metadata.name', message: `"${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')` }]);
  }
}

/** The MicroTime fields of built-in kinds, by `group/resource`: Go's RFC3339Micro wants exactly six fraction digits. */
const MICRO_TIME_FIELDS: Record<string, readonly string[][]> = {
  'coordination.k8s.io/leases': [['spec', 'acquireTime'], ['spec', 'renewTime']],
  '/events': [['eventTime']],
  'events.k8s.io/events': [['eventTime'], ['series', 'lastObservedTime']],
};
const RFC3339_MICRO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(Z|[+-]\d\d:\d\d)$/;

/**
 * Decoding as the real server does for MicroTime fields (a Lease's renewTime, an Event's
 * eventTime): anything but six fraction digits is a 400, e.g. a JavaScript Date's milliseconds.
 */
export function checkMicroTimes(res: ResourceInfo, obj: Record<string, unknown>): void {
  for (const path of MICRO_TIME_FIELDS[`${res.group}/${res.resource}`] ?? []) {
    let v: unknown = obj;
    for (const k of path) v = isObject(v) ? v[k] : undefined;
    if (v === undefined || v === null || v === '' || (typeof v === 'string' && RFC3339_MICRO.test(v))) continue;
    const text = String(v);
    const rest = /T\d\d:\d\d:\d\d(.*)$/.exec(text)?.[1] ?? text;
    throw badRequest(`${res.kind} in version "${res.version}" cannot be handled as a ${res.kind}: parsing time "${text}" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "${rest}" as ".000000"`);
  }
}

/** Finalizer names the API server itself knows (apimachinery's standard finalizers). */
const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/**
 * ObjectMeta rules the real server checks on every write: finalizer names of built-in objects
 * must be standard or qualified (`example.com/name`; custom resources only get a warning), and at
 * most one ownerReference may be the controller.
 */
export function validateMetadata(res: ResourceInfo, name: string, md: { finalizers?: string[]; ownerReferences?: Array<{ kind?: string; name?: string; controller?: boolean }> }): void {
  if (res.builtin) {
    for (const [i, f] of (md.finalizers ?? []).entries()) {
      if (STANDARD_FINALIZERS.has(f) || f.includes('/')) continue;
      throw invalid(res, name, [{ reason: 'FieldValueInvalid', field: `metadata.finalizers[${i}]`, message: `${JSON.stringify(f)}: name is neither a standard finalizer name nor is it fully qualified` }]);
    }
  }
  const controllers = (md.ownerReferences ?? []).filter((r) => r.controller === true);
  if (controllers.length > 1) {
    const refs = controllers.map((r) => `${r.kind}/${r.name}`).join(' and ');
    throw invalid(res, name, [{ reason: 'FieldValueInvalid', field: 'metadata.ownerReferences', message: `${JSON.stringify(md.ownerReferences)}: Only one reference can have Controller set to true. Found "true" in references for ${refs}` }]);
  }
}

function qosClass(spec: Record<string, unknown>): string {
  const containers = [...((spec.containers as unknown[]) ?? []), ...((spec.initContainers as unknown[]) ?? [])].filter(isObject);
  let anySet = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    const res = isObject(c.resources) ? c.resources : {};
    const req = isObject(res.requests) ? res.requests : {};
    const lim = isObject(res.limits) ? res.limits : {};
    if (Object.keys(req).length > 0 || Object.keys(lim).length > 0) anySet = true;
    for (const k of ['cpu', 'memory']) {
      if (lim[k] === undefined || (req[k] !== undefined && String(req[k]) !== String(lim[k]))) guaranteed = false;
    }
  }
  if (!anySet) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

const SERVICE_ACCOUNT_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * What the real server's ServiceAccount admission plugin does to a new pod: the `default` service
 * account when none is named, and, unless the pod opts out (`automountServiceAccountToken:
 * false`), a projected `kube-api-access-<5 random>` volume (token, the cluster CA, the namespace)
 * mounted read-only at `/var/run/secrets/kubernetes.io/serviceaccount` in every container that
 * has nothing mounted there. KubeVirt's attachment-pod comparison counts this volume. Not
 * emulated: the 403 for a service account that does not exist, and a service account's own
 * `automountServiceAccountToken: false`.
 */
function injectServiceAccountToken(spec: Record<string, unknown>): void {
  if (typeof spec.serviceAccountName !== 'string' || spec.serviceAccountName === '') spec.serviceAccountName = 'default';
  spec.serviceAccount = spec.serviceAccountName;
  if (spec.automountServiceAccountToken === false) return;
  const containers = [...((spec.initContainers as unknown[]) ?? []), ...((spec.containers as unknown[]) ?? [])].filter(isObject);
  const needing = containers.filter((c) => !((c.volumeMounts as unknown[] | undefined) ?? []).some((m) => isObject(m) && m.mountPath === SERVICE_ACCOUNT_MOUNT_PATH));
  if (needing.length === 0) return;
  const name = generateName('kube-api-access-');
  const volumes = Array.isArray(spec.volumes) ? spec.volumes : (spec.volumes = []);
  volumes.push({
    name,
    projected: {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    },
  });
  for (const c of needing) {
    const mounts = Array.isArray(c.volumeMounts) ? c.volumeMounts : (c.volumeMounts = []);
    mounts.push({ name, readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT_PATH });
  }
}

const JOB_UID_LABEL = 'batch.kubernetes.io/controller-uid';
const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';

/**
 * A Job's generated selector and template labels, as the real Job strategy writes them on create
 * (unless `spec.manualSelector`): the selector matches `batch.kubernetes.io/controller-uid`, and
 * the pod template carries it and `batch.kubernetes.io/job-name`, plus their legacy
 * `controller-uid` / `job-name` twins. Needs the object's name and UID.
 */
function generateJobSelector(obj: KubeObject): void {
  const spec = isObject(obj.spec) ? obj.spec : (obj.spec = {});
  if (spec.manualSelector === true) return;
  const uid = obj.metadata.uid ?? '';
  const name = obj.metadata.name ?? '';
  spec.selector = { matchLabels: { [JOB_UID_LABEL]: uid } };
  const template = isObject(spec.template) ? spec.template : (spec.template = {});
  const meta = isObject(template.metadata) ? template.metadata : (template.metadata = {});
  meta.labels = { ...(isObject(meta.labels) ? meta.labels : {}), [JOB_UID_LABEL]: uid, [JOB_NAME_LABEL]: name, 'controller-uid': uid, 'job-name': name };
}

/** batch/v1 Job defaults (SetDefaults_Job) and its initial status; the selector once it has a name. */
function prepareJob(obj: KubeObject): void {
  const spec = isObject(obj.spec) ? obj.spec : (obj.spec = {});
  if (spec.completions === undefined && spec.parallelism === undefined) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  spec.parallelism ??= 1;
  spec.backoffLimit ??= 6;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  spec.manualSelector ??= false;
  spec.podReplacementPolicy ??= spec.podFailurePolicy !== undefined ? 'Failed' : 'TerminatingOrFailed';
  obj.status = {};
}

/** Defaults that need the object's name and UID (a Job's generated selector): after both are set. */
export function prepareNamedForCreate(res: ResourceInfo, obj: KubeObject): void {
  if (res.group === 'batch' && res.resource === 'jobs') generateJobSelector(obj);
}

/** Core defaults and the initial status the real strategies set on create. */
export function prepareForCreate(res: ResourceInfo, obj: KubeObject): void {
  if (res.group === 'batch' && res.resource === 'jobs') return prepareJob(obj);
  // SetDefaults_PriorityClass.
  if (res.group === 'scheduling.k8s.io' && res.resource === 'priorityclasses') obj.preemptionPolicy ??= 'PreemptLowerPriority';
  if (res.group !== '') return;
  if (res.resource === 'pods') {
    const spec = isObject(obj.spec) ? obj.spec : (obj.spec = {});
    spec.restartPolicy ??= 'Always';
    spec.terminationGracePeriodSeconds ??= 30;
    spec.dnsPolicy ??= 'ClusterFirst';
    spec.schedulerName ??= 'default-scheduler';
    spec.securityContext ??= {};
    spec.enableServiceLinks ??= true;
    spec.priority ??= 0;
    for (const c of [...((spec.containers as unknown[]) ?? []), ...((spec.initContainers as unknown[]) ?? [])]) {
      if (!isObject(c)) continue;
      c.terminationMessagePath ??= '/dev/termination-log';
      c.terminationMessagePolicy ??= 'File';
      c.imagePullPolicy ??= typeof c.image === 'string' && !c.image.includes(':') ? 'Always' : 'IfNotPresent';
    }
    injectServiceAccountToken(spec);
    obj.status = { phase: 'Pending', qosClass: qosClass(spec) };
  } else if (res.resource === 'persistentvolumeclaims') {
    obj.status = { phase: 'Pending' };
  } else if (res.resource === 'namespaces') {
    obj.spec = { finalizers: ['kubernetes'] };
    obj.status = { phase: 'Active' };
    obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name! };
  }
}
