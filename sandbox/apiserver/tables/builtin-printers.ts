/**
 * The columns the real server prints for the built-in kinds (`kubectl get pods`, `-o wide`):
 * the column names, priorities (1 = only with `-o wide`) and cell rules of Kubernetes' internal
 * printers, written for the emulator. Kinds without a printer get NAME and AGE.
 */
import { isObject } from '../types.ts';
import { ageOf } from './human-duration.ts';

/** A `columnDefinitions` entry of a meta.k8s.io Table. */
export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** Turns an object into the cells after NAME (same order as `columns`). */
export interface Printer {
  columns: ColumnDefinition[];
  cells(obj: Obj, nowMs: number): unknown[];
  /** The NAME cell, when it is not just metadata.name (StorageClass marks the default). */
  name?(obj: Obj): string;
}

type Obj = Record<string, unknown>;

const NONE = '<none>';

function col(name: string, priority = 0, type = 'string', description = ''): ColumnDefinition {
  return { name, type, format: '', description, priority };
}

function o(v: unknown): Obj {
  return isObject(v) ? v : {};
}
function list(v: unknown): Obj[] {
  return Array.isArray(v) ? v.filter(isObject) : [];
}
function s(v: unknown, empty = ''): string {
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : empty;
}
function n(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}
const md = (x: Obj): Obj => o(x.metadata);
const age = (x: Obj, now: number): string => ageOf(md(x).creationTimestamp, now);

function podStatus(pod: Obj): { reason: string; ready: number; restarts: number; lastRestart?: string } {
  const spec = o(pod.spec);
  const status = o(pod.status);
  let reason = s(status.reason) || s(status.phase);
  let restarts = 0;
  let lastRestart: string | undefined;
  const noteRestart = (c: Obj): void => {
    restarts += n(c.restartCount);
    const finished = s(o(o(c.lastState).terminated).finishedAt);
    if (finished && (!lastRestart || finished > lastRestart)) lastRestart = finished;
  };
  let initializing = false;
  const inits = list(status.initContainerStatuses);
  for (const [i, c] of inits.entries()) {
    noteRestart(c);
    const term = o(o(c.state).terminated);
    const wait = o(o(c.state).waiting);
    if (isObject(o(c.state).terminated) && n(term.exitCode) === 0) continue;
    initializing = true;
    if (isObject(o(c.state).terminated)) reason = s(term.reason) ? `Init:${s(term.reason)}` : term.signal ? `Init:Signal:${n(term.signal)}` : `Init:ExitCode:${n(term.exitCode)}`;
    else if (s(wait.reason) && wait.reason !== 'PodInitializing') reason = `Init:${s(wait.reason)}`;
    else reason = `Init:${i}/${list(spec.initContainers).length}`;
    break;
  }
  let ready = 0;
  const initialized = list(status.conditions).some((c) => c.type === 'Initialized' && c.status === 'True');
  if (!initializing || initialized) {
    restarts = 0;
    let running = false;
    const cs = list(status.containerStatuses);
    for (let i = cs.length - 1; i >= 0; i--) {
      const c = cs[i]!;
      noteRestart(c);
      const state = o(c.state);
      if (s(o(state.waiting).reason)) reason = s(o(state.waiting).reason);
      else if (s(o(state.terminated).reason)) reason = s(o(state.terminated).reason);
      else if (isObject(state.terminated)) reason = o(state.terminated).signal ? `Signal:${n(o(state.terminated).signal)}` : `ExitCode:${n(o(state.terminated).exitCode)}`;
      else if (c.ready === true && isObject(state.running)) {
        running = true;
        ready++;
      }
    }
    if (reason === 'Completed' && running) reason = list(status.conditions).some((c) => c.type === 'Ready' && c.status === 'True') ? 'Running' : 'NotReady';
  }
  const phase = s(status.phase);
  if (md(pod).deletionTimestamp && status.reason === 'NodeLost') reason = 'Unknown';
  else if (md(pod).deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';
  return lastRestart ? { reason, ready, restarts, lastRestart } : { reason, ready, restarts };
}

const ACCESS_MODES: Array<[string, string]> = [['ReadWriteOnce', 'RWO'], ['ReadOnlyMany', 'ROX'], ['ReadWriteMany', 'RWX'], ['ReadWriteOncePod', 'RWOP']];
function accessModes(v: unknown): string {
  const modes = Array.isArray(v) ? v : [];
  return ACCESS_MODES.filter(([m]) => modes.includes(m)).map(([, short]) => short).join(',');
}

function containersAndImages(podSpec: Obj): [string, string] {
  const cs = list(podSpec.containers);
  return [cs.map((c) => s(c.name)).join(','), cs.map((c) => s(c.image)).join(',')];
}

function selectorText(sel: unknown): string {
  const x = o(sel);
  const parts = Object.entries(o(x.matchLabels)).map(([k, v]) => `${k}=${String(v)}`);
  for (const e of list(x.matchExpressions)) {
    const values = Array.isArray(e.values) ? e.values.join(',') : '';
    const op = s(e.operator);
    parts.push(op === 'Exists' ? s(e.key) : op === 'DoesNotExist' ? `!${s(e.key)}` : `${s(e.key)} ${op.toLowerCase()} (${values})`);
  }
  return parts.length ? parts.join(',') : NONE;
}

function workloadWide(x: Obj): [string, string, string] {
  const [c, i] = containersAndImages(o(o(o(x.spec).template).spec));
  return [c, i, selectorText(o(x.spec).selector)];
}
const WORKLOAD_WIDE = [col('Containers', 1), col('Images', 1), col('Selector', 1)];

function nodeRoles(labels: Obj): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(labels)) {
    if (k.startsWith('node-role.kubernetes.io/') && k.length > 'node-role.kubernetes.io/'.length) roles.add(k.slice('node-role.kubernetes.io/'.length));
    else if (k === 'kubernetes.io/role' && typeof v === 'string' && v) roles.add(v);
  }
  return roles.size ? [...roles].sort().join(',') : NONE;
}

function nodeStatus(node: Obj): string {
  const ready = list(o(node.status).conditions).find((c) => c.type === 'Ready');
  const out = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (o(node.spec).unschedulable === true) out.push('SchedulingDisabled');
  return out.join(',');
}

function address(node: Obj, type: string): string {
  return s(list(o(node.status).addresses).find((a) => a.type === type)?.address, NONE);
}

function eventCells(e: Obj, now: number): unknown[] {
  const series = isObject(e.series) ? e.series : undefined;
  const first = e.firstTimestamp ? ageOf(e.firstTimestamp, now) : ageOf(e.eventTime, now);
  let last = e.lastTimestamp ? ageOf(e.lastTimestamp, now) : first;
  let count = n(e.count) || 1;
  if (series) {
    last = ageOf(series.lastObservedTime, now);
    count = n(series.count);
  }
  const io = o(e.involvedObject);
  const target = s(io.name) ? `${s(io.kind).toLowerCase()}/${s(io.name)}` : s(io.kind).toLowerCase();
  const src = o(e.source);
  const source = s(src.component) ? (s(src.host) ? `${s(src.component)}, ${s(src.host)}` : s(src.component)) : s(e.reportingComponent);
  return [last, s(e.type), s(e.reason), target, s(io.fieldPath), source, s(e.message).trim(), first, count, s(md(e).name)];
}

function ports(svc: Obj): string {
  const p = list(o(svc.spec).ports).map((x) => `${n(x.port)}${x.nodePort ? `:${n(x.nodePort)}` : ''}/${s(x.protocol, 'TCP')}`);
  return p.length ? p.join(',') : NONE;
}

function dataCount(x: Obj): number {
  return Object.keys(o(x.data)).length + Object.keys(o(x.binaryData)).length;
}

/** Printers by `group/resource`. */
export const BUILTIN_PRINTERS: Readonly<Record<string, Printer>> = {
  '/pods': {
    columns: [col('Ready'), col('Status'), col('Restarts'), col('Age'), col('IP', 1), col('Node', 1), col('Nominated Node', 1), col('Readiness Gates', 1)],
    cells(pod, now) {
      const st = podStatus(pod);
      const status = o(pod.status);
      const spec = o(pod.spec);
      const gates = list(spec.readinessGates);
      const gateText = gates.length ? `${gates.filter((g) => list(status.conditions).some((c) => c.type === g.conditionType && c.status === 'True')).length}/${gates.length}` : NONE;
      const restarts = st.lastRestart ? `${st.restarts} (${ageOf(st.lastRestart, now)} ago)` : st.restarts;
      return [`${st.ready}/${list(spec.containers).length}`, st.reason, restarts, age(pod, now), s(status.podIP, NONE), s(spec.nodeName, NONE), s(status.nominatedNodeName, NONE), gateText];
    },
  },
  '/nodes': {
    columns: [col('Status'), col('Roles'), col('Age'), col('Version'), col('Internal-IP', 1), col('External-IP', 1), col('OS-Image', 1), col('Kernel-Version', 1), col('Container-Runtime', 1)],
    cells(node, now) {
      const info = o(o(node.status).nodeInfo);
      return [nodeStatus(node), nodeRoles(o(md(node).labels)), age(node, now), s(info.kubeletVersion), address(node, 'InternalIP'), address(node, 'ExternalIP'), s(info.osImage, '<unknown>'), s(info.kernelVersion, '<unknown>'), s(info.containerRuntimeVersion, '<unknown>')];
    },
  },
  '/namespaces': { columns: [col('Status'), col('Age')], cells: (x, now) => [s(o(x.status).phase), age(x, now)] },
  '/persistentvolumeclaims': {
    columns: [col('Status'), col('Volume'), col('Capacity'), col('Access Modes'), col('StorageClass'), col('VolumeAttributesClass'), col('Age'), col('VolumeMode', 1)],
    cells(pvc, now) {
      const spec = o(pvc.spec);
      const status = o(pvc.status);
      const bound = s(spec.volumeName) !== '';
      const sc = s(spec.storageClassName) || s(o(md(pvc).annotations)['volume.beta.kubernetes.io/storage-class']);
      return [md(pvc).deletionTimestamp ? 'Terminating' : s(status.phase), s(spec.volumeName), bound ? s(o(status.capacity).storage) : '', bound ? accessModes(status.accessModes) : '', sc, s(spec.volumeAttributesClassName, '<unset>'), age(pvc, now), s(spec.volumeMode, '<unset>')];
    },
  },
  '/persistentvolumes': {
    columns: [col('Capacity'), col('Access Modes'), col('Reclaim Policy'), col('Status'), col('Claim'), col('StorageClass'), col('VolumeAttributesClass'), col('Reason'), col('Age'), col('VolumeMode', 1)],
    cells(pv, now) {
      const spec = o(pv.spec);
      const claim = o(spec.claimRef);
      return [s(o(spec.capacity).storage), accessModes(spec.accessModes), s(spec.persistentVolumeReclaimPolicy), md(pv).deletionTimestamp ? 'Terminating' : s(o(pv.status).phase), s(claim.name) ? `${s(claim.namespace)}/${s(claim.name)}` : '', s(spec.storageClassName), s(spec.volumeAttributesClassName, '<unset>'), s(o(pv.status).reason), age(pv, now), s(spec.volumeMode, '<unset>')];
    },
  },
  '/events': {
    columns: [col('Last Seen'), col('Type'), col('Reason'), col('Object'), col('Subobject', 1), col('Source', 1), col('Message'), col('First Seen', 1), col('Count', 1, 'integer'), col('Name', 1)],
    cells: eventCells,
  },
  '/configmaps': { columns: [col('Data', 0, 'integer'), col('Age')], cells: (x, now) => [dataCount(x), age(x, now)] },
  '/secrets': { columns: [col('Type'), col('Data', 0, 'integer'), col('Age')], cells: (x, now) => [s(x.type), dataCount(x), age(x, now)] },
  '/serviceaccounts': { columns: [col('Secrets', 0, 'integer'), col('Age')], cells: (x, now) => [list(x.secrets).length, age(x, now)] },
  '/services': {
    columns: [col('Type'), col('Cluster-IP'), col('External-IP'), col('Port(s)'), col('Age'), col('Selector', 1)],
    cells(svc, now) {
      const spec = o(svc.spec);
      const ext = Array.isArray(spec.externalIPs) && spec.externalIPs.length ? spec.externalIPs.join(',') : NONE;
      const sel = Object.entries(o(spec.selector)).map(([k, v]) => `${k}=${String(v)}`).join(',') || NONE;
      return [s(spec.type, 'ClusterIP'), s(spec.clusterIP, NONE), ext, ports(svc), age(svc, now), sel];
    },
  },
  'coordination.k8s.io/leases': { columns: [col('Holder'), col('Age')], cells: (x, now) => [s(o(x.spec).holderIdentity), age(x, now)] },
  'policy/poddisruptionbudgets': {
    columns: [col('Min Available'), col('Max Unavailable'), col('Allowed Disruptions', 0, 'integer'), col('Age')],
    cells: (x, now) => [s(o(x.spec).minAvailable, 'N/A'), s(o(x.spec).maxUnavailable, 'N/A'), n(o(x.status).disruptionsAllowed), age(x, now)],
  },
  'apps/deployments': {
    columns: [col('Ready'), col('Up-to-date', 0, 'integer'), col('Available', 0, 'integer'), col('Age'), ...WORKLOAD_WIDE],
    cells: (x, now) => [`${n(o(x.status).readyReplicas)}/${n(o(x.spec).replicas)}`, n(o(x.status).updatedReplicas), n(o(x.status).availableReplicas), age(x, now), ...workloadWide(x)],
  },
  'apps/replicasets': {
    columns: [col('Desired', 0, 'integer'), col('Current', 0, 'integer'), col('Ready', 0, 'integer'), col('Age'), ...WORKLOAD_WIDE],
    cells: (x, now) => [n(o(x.spec).replicas), n(o(x.status).replicas), n(o(x.status).readyReplicas), age(x, now), ...workloadWide(x)],
  },
  'apps/statefulsets': {
    columns: [col('Ready'), col('Age'), col('Containers', 1), col('Images', 1)],
    cells: (x, now) => [`${n(o(x.status).readyReplicas)}/${n(o(x.spec).replicas)}`, age(x, now), ...workloadWide(x).slice(0, 2)],
  },
  'apps/daemonsets': {
    columns: [col('Desired', 0, 'integer'), col('Current', 0, 'integer'), col('Ready', 0, 'integer'), col('Up-to-date', 0, 'integer'), col('Available', 0, 'integer'), col('Node Selector'), col('Age'), ...WORKLOAD_WIDE],
    cells(x, now) {
      const st = o(x.status);
      const sel = Object.entries(o(o(o(o(x.spec).template).spec).nodeSelector)).map(([k, v]) => `${k}=${String(v)}`).join(',') || NONE;
      return [n(st.desiredNumberScheduled), n(st.currentNumberScheduled), n(st.numberReady), n(st.updatedNumberScheduled), n(st.numberAvailable), sel, age(x, now), ...workloadWide(x)];
    },
  },
  'apps/controllerrevisions': {
    columns: [col('Controller'), col('Revision', 0, 'integer'), col('Age')],
    cells(x, now) {
      const owner = list(md(x).ownerReferences).find((r) => r.controller === true);
      const group = owner ? s(owner.apiVersion).split('/').slice(0, -1).join('') : '';
      const controller = owner ? `${s(owner.kind).toLowerCase()}${group ? `.${group}` : ''}/${s(owner.name)}` : NONE;
      return [controller, n(x.revision), age(x, now)];
    },
  },
  'storage.k8s.io/storageclasses': {
    columns: [col('Provisioner'), col('ReclaimPolicy'), col('VolumeBindingMode'), col('AllowVolumeExpansion', 0, 'boolean'), col('Age')],
    cells: (x, now) => [s(x.provisioner), s(x.reclaimPolicy, 'Delete'), s(x.volumeBindingMode, 'Immediate'), x.allowVolumeExpansion === true, age(x, now)],
    name: (x) => {
      const ann = o(md(x).annotations);
      const isDefault = ann['storageclass.kubernetes.io/is-default-class'] === 'true' || ann['storageclass.beta.kubernetes.io/is-default-class'] === 'true';
      return `${s(md(x).name)}${isDefault ? ' (default)' : ''}`;
    },
  },
};

/** NAME and AGE: what kinds without a printer show. */
export const DEFAULT_PRINTER: Printer = { columns: [col('Age')], cells: (x, now) => [age(x, now)] };
