/**
 * Where a pod fits: the scheduler's filter and score steps as a pure function over a snapshot of
 * nodes and bound pods. Filters: node unschedulable, taints, nodeSelector + required node
 * affinity, capacity (requests vs allocatable minus what is bound), required pod affinity and
 * anti-affinity in both directions. Score: least allocated, then name, so runs are repeatable.
 */
import { milli, parseQuantity } from './quantity.ts';
import { labelSelectorMatches, nodeSelectorMatches, nodeSelectorTermsMatch, untoleratedTaint } from './selectors.ts';
import { conditionOf, type Node, type Pod, type PodAffinityTerm, type StringMap, type Taint } from './objects.ts';

/** Resource name → amount (cpu in milli-cores, everything else in base units). */
export type Resources = Map<string, number>;

/** A pod already placed on a node (bound, or assumed by the scheduler). */
export interface PlacedPod {
  pod: Pod;
  nodeName: string;
}

/** The pods on one node and the sum of their requests. */
interface NodeEntry {
  readonly pods: Map<string, PlacedPod>;
  readonly used: Resources;
}

const hasAntiAffinity = (pod: Pod) => (pod.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.length ?? 0) > 0;

/**
 * The placed pods kept by node, with each node's summed requests and the few pods that carry
 * anti-affinity terms, updated one pod at a time — so a placement reads each node's entry
 * instead of walking every placed pod (which made a burst O(N²) in the pods).
 */
export class PlacedIndex {
  readonly #byNode = new Map<string, NodeEntry>();
  readonly #where = new Map<string, string>();
  readonly #anti = new Map<string, PlacedPod>();

  /** An index of `placed` (keys by position: for callers that hold a list). */
  static of(placed: readonly PlacedPod[]): PlacedIndex {
    const index = new PlacedIndex();
    placed.forEach((p, i) => index.set(String(i), p.pod, p.nodeName));
    return index;
  }

  /** `pod` (under `key`) is on `nodeName`, or on no node (undefined): replaces what the key held. */
  set(key: string, pod: Pod, nodeName: string | undefined): void {
    this.delete(key);
    if (!nodeName) return;
    let entry = this.#byNode.get(nodeName);
    if (!entry) this.#byNode.set(nodeName, (entry = { pods: new Map(), used: new Map() }));
    const placed = { pod, nodeName };
    entry.pods.set(key, placed);
    for (const [r, v] of cachedRequests(pod)) entry.used.set(r, (entry.used.get(r) ?? 0) + v);
    this.#where.set(key, nodeName);
    if (hasAntiAffinity(pod)) this.#anti.set(key, placed);
  }

  delete(key: string): void {
    const nodeName = this.#where.get(key);
    if (nodeName === undefined) return;
    this.#where.delete(key);
    this.#anti.delete(key);
    const entry = this.#byNode.get(nodeName);
    const old = entry?.pods.get(key);
    if (!entry || !old) return;
    entry.pods.delete(key);
    for (const [r, v] of cachedRequests(old.pod)) entry.used.set(r, (entry.used.get(r) ?? 0) - v);
    if (entry.pods.size === 0) this.#byNode.delete(nodeName);
  }

  clear(): void {
    this.#byNode.clear();
    this.#where.clear();
    this.#anti.clear();
  }

  podCount(nodeName: string): number {
    return this.#byNode.get(nodeName)?.pods.size ?? 0;
  }
  used(nodeName: string): Resources {
    return this.#byNode.get(nodeName)?.used ?? new Map();
  }
  withAntiAffinity(): Iterable<PlacedPod> {
    return this.#anti.values();
  }
  *all(): Iterable<PlacedPod> {
    for (const e of this.#byNode.values()) yield* e.pods.values();
  }
}

/** The outcome: a node, or why every node was rejected. */
export type Placement = { nodeName: string } | { nodeName?: undefined; message: string };

function amount(resource: string, value: string): number {
  return resource === 'cpu' ? milli(value) : parseQuantity(value);
}

// Pods and nodes from an informer's cache are immutable snapshots (an update is a new object), so
// a pod's requests and a node's quantities are computed once per object, not once per placement
// or admission of every other pod. Callers must not change what these answer.
const requestsCache = new WeakMap<Pod, Resources>();
const amountsCache = new WeakMap<StringMap, Resources>();

/** {@link podRequests}, computed once per pod object. */
export function cachedRequests(pod: Pod): Resources {
  let r = requestsCache.get(pod);
  if (!r) requestsCache.set(pod, (r = podRequests(pod)));
  return r;
}

/** A resource list (a node's capacity or allocatable) as amounts, computed once per object. */
export function cachedAmounts(list: StringMap | undefined): Resources {
  if (!list) return new Map();
  let out = amountsCache.get(list);
  if (!out) {
    out = new Map();
    for (const [r, v] of Object.entries(list)) out.set(r, amount(r, v));
    amountsCache.set(list, out);
  }
  return out;
}

/** Effective requests of a pod: max(sum of containers, any init container) + overhead; a missing
 * request defaults to the limit, as API defaulting does. */
export function podRequests(pod: Pod): Resources {
  const total: Resources = new Map();
  const add = (into: Resources, res: StringMap | undefined) => {
    for (const [r, v] of Object.entries(res ?? {})) into.set(r, (into.get(r) ?? 0) + amount(r, v));
  };
  const containerRequests = (c: { resources?: { requests?: StringMap; limits?: StringMap } }): StringMap => ({
    ...(c.resources?.limits ?? {}),
    ...(c.resources?.requests ?? {}),
  });
  for (const c of pod.spec?.containers ?? []) add(total, containerRequests(c));
  for (const c of pod.spec?.initContainers ?? []) {
    const one: Resources = new Map();
    add(one, containerRequests(c));
    for (const [r, v] of one) total.set(r, Math.max(total.get(r) ?? 0, v));
  }
  add(total, pod.spec?.overhead);
  return total;
}

function allocatable(node: Node): Resources {
  return cachedAmounts(node.status?.allocatable ?? node.status?.capacity);
}

const taintsCache = new WeakMap<Node, Taint[]>();

/** Taints including the ones the node lifecycle controller would add for a NotReady node (once per node object). */
function effectiveTaints(node: Node): Taint[] {
  let taints = taintsCache.get(node);
  if (taints) return taints;
  taints = [...(node.spec?.taints ?? [])];
  const ready = conditionOf(node.status?.conditions, 'Ready');
  if (ready && ready.status !== 'True') taints.push({ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' });
  taintsCache.set(node, taints);
  return taints;
}

function termNamespaces(term: PodAffinityTerm, ownNamespace: string): string[] | 'all' {
  if (term.namespaces && term.namespaces.length > 0) return term.namespaces;
  // Simplification: the sandbox does not read namespace labels, so any namespaceSelector
  // (empty = all namespaces upstream) is treated as "all namespaces".
  if (term.namespaceSelector) return 'all';
  return [ownNamespace];
}

function termMatchesPod(term: PodAffinityTerm, termOwnerNamespace: string, other: Pod): boolean {
  const ns = termNamespaces(term, termOwnerNamespace);
  if (ns !== 'all' && !ns.includes(other.metadata?.namespace ?? '')) return false;
  return labelSelectorMatches(term.labelSelector, other.metadata?.labels);
}

function sameDomain(key: string, a: Node | undefined, b: Node | undefined): boolean {
  const va = a?.metadata?.labels?.[key];
  return va !== undefined && va === b?.metadata?.labels?.[key];
}

/** Runs filters and score; `placed` are the pods already on nodes (not terminal). */
export function placePod(pod: Pod, nodes: readonly Node[], placedPods: readonly PlacedPod[] | PlacedIndex): Placement {
  const index = placedPods instanceof PlacedIndex ? placedPods : PlacedIndex.of(placedPods);
  const ns = pod.metadata?.namespace ?? '';
  const req = cachedRequests(pod);
  // Nodes by name, for the (anti-)affinity domains only.
  let byNameMap: Map<string, Node> | undefined;
  const byName = () => (byNameMap ??= new Map(nodes.map((n) => [n.metadata?.name ?? '', n])));
  const reasons = new Map<string, number>();
  // Nodes where evicting lower-priority pods could make room (kube-scheduler's `Unschedulable`,
  // as opposed to `UnschedulableAndUnresolvable`): the preemption message counts them apart.
  let resolvable = 0;
  const reject = (reason: string, canPreempt = false) => {
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    if (canPreempt) resolvable++;
  };
  const affinity = pod.spec?.affinity;
  const antiTerms = affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
  const affTerms = affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
  const candidates: { name: string; score: number }[] = [];
  // Only a pod with pod (anti-)affinity terms needs the placed pods of other nodes.
  let all: PlacedPod[] | undefined;
  const allPlaced = () => (all ??= [...index.all()]);
  const withAnti = [...index.withAntiAffinity()];

  for (const node of nodes) {
    const name = node.metadata?.name ?? '';
    const labels = node.metadata?.labels;
    if (node.spec?.unschedulable) {
      reject('node(s) were unschedulable');
      continue;
    }
    const taint = untoleratedTaint(effectiveTaints(node), pod.spec?.tolerations);
    if (taint) {
      reject(`node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`);
      continue;
    }
    const terms = affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
    if (!nodeSelectorMatches(pod.spec?.nodeSelector, labels) || !nodeSelectorTermsMatch(terms, name, labels)) {
      reject("node(s) didn't match Pod's node affinity/selector");
      continue;
    }
    const onNodeCount = index.podCount(name);
    const alloc = allocatable(node);
    const used: Resources = index.used(name);
    if (onNodeCount + 1 > (alloc.get('pods') ?? Infinity)) {
      reject('Too many pods', true);
      continue;
    }
    let short: string[] | undefined;
    for (const [r, v] of req) if (v > 0 && (used.get(r) ?? 0) + v > (alloc.get(r) ?? 0)) (short ??= []).push(r);
    if (short) {
      // A request over the node's whole allocatable is unresolvable: no eviction makes room.
      const unresolvable = short.some((r) => (req.get(r) ?? 0) > (alloc.get(r) ?? 0));
      short.forEach((r, i) => reject(`Insufficient ${r}`, i === 0 && !unresolvable));
      continue;
    }
    const inDomain = (key: string) => allPlaced().filter((p) => sameDomain(key, byName().get(p.nodeName), node));
    if (antiTerms.some((t) => inDomain(t.topologyKey).some((p) => termMatchesPod(t, ns, p.pod)))) {
      reject("node(s) didn't match pod anti-affinity rules", true);
      continue;
    }
    // Symmetry: an existing pod's anti-affinity also keeps this pod away from its domain.
    const existingAnti = withAnti.some((p) =>
      (p.pod.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).some(
        (t) => sameDomain(t.topologyKey, byName().get(p.nodeName), node) && termMatchesPod(t, p.pod.metadata?.namespace ?? '', pod),
      ),
    );
    if (existingAnti) {
      reject("node(s) didn't satisfy existing pods anti-affinity rules", true);
      continue;
    }
    if (!affTerms.every((t) => inDomain(t.topologyKey).some((p) => termMatchesPod(t, ns, p.pod)))) {
      reject("node(s) didn't match pod affinity rules");
      continue;
    }
    const frac = (r: string) => ((used.get(r) ?? 0) + (req.get(r) ?? 0)) / Math.max(1, alloc.get(r) ?? 1);
    candidates.push({ name, score: (frac('cpu') + frac('memory')) / 2 + onNodeCount * 1e-6 });
  }

  candidates.sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  const best = candidates[0];
  if (best) return { nodeName: best.name };
  return { message: unschedulableMessage(nodes.length, reasons, resolvable) };
}

/**
 * kube-scheduler's `FitError` text with the default preemption plugin's post-filter message:
 * `0/4 nodes are available: 1 Insufficient devices.kubevirt.io/kvm, 3 node(s) didn't match Pod's
 * node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for
 * scheduling.` — `resolvable` nodes (where evicting pods could make room) find no victim, every
 * sandbox pod having the same priority; on the others preemption is not helpful (a request over
 * the node's whole allocatable, a selector, a taint…). Checked against kube-scheduler v1.37 on the
 * real lane (test/sandbox/nodes/strict-kubelet.test.ts).
 */
export function unschedulableMessage(total: number, reasons: Map<string, number>, resolvable = 0): string {
  const parts = [...reasons].map(([r, n]) => `${n} ${r}`).sort();
  if (total === 0) return 'no nodes available to schedule pods';
  const helpless = Math.max(0, total - resolvable);
  const post = [...(resolvable > 0 ? [`${resolvable} No preemption victims found for incoming pod`] : []), ...(helpless > 0 ? [`${helpless} Preemption is not helpful for scheduling`] : [])].sort();
  return `0/${total} nodes are available: ${parts.join(', ')}. preemption: 0/${total} nodes are available: ${post.join(', ')}.`;
}
