/**
 * The sandbox cluster in one call: an API server plus the simulated node side (nodes,
 * scheduler, kubelet, virt-handler), all sharing one controllable clock. The node side talks to
 * the API server only over HTTP through client-node, as identity `node-sim`, so the server's
 * request counters keep its traffic apart from the controllers'.
 *
 * Two control planes (`controlPlane`, default from VR_CONTROL_PLANE): `emulator`, our own API
 * server (apiserver/), or `real`, the upstream kube-apiserver, kube-controller-manager and
 * kube-scheduler (real/, docs/control-plane.md). On the real one the real scheduler binds pods
 * (ours does not run), the node side renews node Leases so the node lifecycle controller keeps
 * the nodes Ready, and every identity is held to its RBAC roles.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer, type ApiServer } from './apiserver/index.ts';
import { createClock, type Clock } from './clock.ts';
import { KUBEVIRT, MERGE_PATCH, nodeSideApi, statusCodeOf, type NodeSideApi } from './nodes/api.ts';
import { ClaimFiles } from './nodes/claim-files.ts';
import { createEventRecorder } from './nodes/events.ts';
import { startJobController } from './nodes/job-controller.ts';
import { startKubelet, type Kubelet } from './nodes/kubelet.ts';
import { createNodes, DEFAULT_NODE_SHAPE, type NodeShape } from './nodes/node-pool.ts';
import { startScheduler, type Scheduler } from './nodes/scheduler.ts';
import { startNodeLeases } from './nodes/node-lease.ts';
import { controlPlaneFromEnv, startRealApiServer, type ControlPlane } from './real/control-plane.ts';
import { startVirtHandler, type VirtHandler } from './nodes/virt-handler.ts';
import type { MigrationTimings } from './nodes/migration-steps.ts';
import { deleteNodeWithPods } from './kubevirt/node-faults.ts';
import { virtApiEvictionHook } from './kubevirt/eviction-webhook.ts';
import { virtApiMigrationCreateHook } from './kubevirt/migration-webhook.ts';
import { virtApiMutatingHook } from './kubevirt/mutation-webhook.ts';
import { virtApiIdentityCreateHook, virtApiStatusRevertHook, virtApiVmiUpdateHook } from './kubevirt/identity-webhook.ts';
import { SANDBOX_KUBEVIRT_NAMESPACE } from './kubevirt/identity-admission.ts';
import { IDENTITIES } from './real/identities.ts';
import { serviceAccountUser } from '../shared/kube/kubevirt-identity.ts';
import { KubeConfig } from '@kubernetes/client-node';
import { registerEvictionWebhook, startEvictionWebhookServer, VIRT_API_IDENTITY, type EvictionWebhookServer } from './kubevirt/eviction-webhook-server.ts';
import { startVirtHandlerFleet, type VirtHandlerFleet } from './kubevirt/virt-handler-fleet.ts';
import { startVirtOperator } from './kubevirt/virt-operator.ts';
import { startStorageAgents, type StorageAgents, type StorageAgentsOptions } from './storage/index.ts';

/** The identity the node side uses (bearer token), visible in the server's counters and audit. */
export const NODE_SIM_IDENTITY = 'node-sim';

/**
 * The user the node side acts as: virt-handler's ServiceAccount, whose VMI status writes virt-api
 * keeps (a simulated virt-handler writing as anyone else would have every one of them put back).
 * Impersonated, so the requests stay counted and audited as `node-sim`.
 */
export const KUBEVIRT_HANDLER_USER = serviceAccountUser(SANDBOX_KUBEVIRT_NAMESPACE, 'kubevirt-handler');

/** Each identity's user name on the real lane, which the emulator's admission sees too. */
const SANDBOX_USERS: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(IDENTITIES).map(([id, i]) => [id, i.user]));

/** `kc` acting as `user`: client-node sends its `Impersonate-User`; the identity stays `kc`'s. */
export function kubeConfigActingAs(kc: KubeConfig, user: string): KubeConfig {
  const out = new KubeConfig();
  out.loadFromOptions({ clusters: kc.clusters, users: kc.users.map((u) => ({ ...u, impersonateUser: user })), contexts: kc.contexts, currentContext: kc.currentContext });
  return out;
}

/** Simulated durations (ms on the sandbox clock). */
export interface SandboxTimings {
  /** Bound pod → containers running. Default 1000. */
  podStartupMs?: number;
  /** Hand-off (Scheduled) → Running. Default 1000. */
  vmiBootMs?: number;
  /** VMI deleted → domain shut down (Succeeded). Default 1000. */
  vmiShutdownMs?: number;
  /** Each hotplug volume step of virt-handler (mount, attach, unmount). Default 200. */
  vmiHotplugMs?: number;
  migration?: Partial<MigrationTimings>;
  /** A KubeVirt upgrade's rollout (spec.imageTag changed → Deployed again). Default 10 000. */
  kubevirtDeployMs?: number;
}

export interface SandboxOptions {
  /** Number of nodes (node01..nodeN); default 3. */
  nodes?: number;
  /** API server port; default 0 (any free port). */
  port?: number;
  /** Clock speed (simulated ms per real ms); default 1. Ignored when `clock` is given. */
  speed?: number;
  /** Where to write the kubeconfig; default a new temporary directory. */
  kubeconfigOut?: string;
  /** Share an existing clock (tests use a frozen one and `advance()`). */
  clock?: Clock;
  timings?: SandboxTimings;
  nodeShape?: Partial<NodeShape>;
  /** Per-node shape on top of `nodeShape`, by node name (`{ node02: { resources: { 'devices.kubevirt.io/kvm': null } } }`). */
  nodeShapes?: Record<string, Partial<NodeShape>>;
  /** Jitter source of the virt-handler heartbeats, in [0, 1); default Math.random. */
  random?: () => number;
  /** Told about errors the node side recovered from (watch drops, conflicts…); default silent. */
  onError?: (what: string, err: unknown) => void;
  /**
   * Run the storage side too (CSI snapshotter, provisioner, CDI, export server, backup agent,
   * operator CAs, virt-api subresources: storage/index.ts). Off by default: tests that play CDI
   * by hand must not race an agent doing it.
   */
  storage?: boolean | StorageAgentsOptions;
  /** Which API server: our emulator or the real control plane; default VR_CONTROL_PLANE (emulator). */
  controlPlane?: ControlPlane;
  /** Told about the real control plane's start steps (its build, each component); default silent. */
  log?: (line: string) => void;
  /** Real control plane only: apply the product's RBAC from infra/kubernetes/ at start (default true; see RealApiServerOptions). */
  productRbac?: boolean;
  /** Emulator only: how long an Event lives after its last write (kube-apiserver's `--event-ttl`, default one hour; the real control plane keeps its default). */
  eventTtlMs?: number;
  /** The emulator deep-freezes what it stores, so a mutation of a stored object throws (default true; the benchmarks turn it off). */
  freezeObjects?: boolean;
}

/** A running sandbox cluster. */
export interface Sandbox {
  apiServer: ApiServer;
  /** Which API server this sandbox runs on. */
  controlPlane: ControlPlane;
  /** A kubeconfig for the cluster (identity `admin`). */
  kubeconfigPath: string;
  clock: Clock;
  nodeNames: string[];
  /** Our scheduler (emulator); on the real control plane kube-scheduler binds pods and this is inert. */
  scheduler: Scheduler;
  kubelet: Kubelet;
  virtHandler: VirtHandler;
  /** virt-handler's DaemonSet, pods and heartbeats; `stopHandler(node)` is the crash fault. */
  virtHandlers: VirtHandlerFleet;
  /** virt-api's eviction webhook server (real lane only; the emulator calls the decision in-process). */
  evictionWebhook?: EvictionWebhookServer;
  /**
   * What the programs on the nodes wrote into claims (a source launcher's `meta/migrated` marker),
   * read by the kubelet when it runs a pod that checks for a file (nodes/pod-script.ts).
   */
  claimFiles: ClaimFiles;
  /** Fault: the node is deleted and its pods force-deleted. */
  deleteNode(name: string): Promise<void>;
  /** The storage side, when `storage` was asked for. */
  storage?: StorageAgents;
  /** Stops the node side, then the API server. Safe to call twice. */
  stop(): Promise<void>;
}

/** The `kubevirt/kubevirt` CR, as a deployed KubeVirt leaves it. */
async function createKubeVirtCr(api: NodeSideApi): Promise<void> {
  const coords = { ...KUBEVIRT, namespace: 'kubevirt', plural: 'kubevirts' };
  const body = {
    apiVersion: 'kubevirt.io/v1',
    kind: 'KubeVirt',
    metadata: { name: 'kubevirt', namespace: 'kubevirt' },
    spec: { certificateRotateStrategy: {}, configuration: { developerConfiguration: { featureGates: [] } }, customizeComponents: {}, imagePullPolicy: 'IfNotPresent', workloadUpdateStrategy: {} },
  };
  try {
    await api.custom.createNamespacedCustomObject({ ...coords, body });
  } catch (err) {
    if (statusCodeOf(err) !== 409) throw err;
  }
  const status = {
    phase: 'Deployed',
    conditions: [
      { type: 'Available', status: 'True', reason: 'AllComponentsReady', message: 'All components are ready.' },
      { type: 'Progressing', status: 'False', reason: 'AllComponentsReady', message: 'All components are ready.' },
      { type: 'Degraded', status: 'False', reason: 'AllComponentsReady', message: 'All components are ready.' },
    ],
    defaultArchitecture: 'amd64',
    observedKubeVirtVersion: 'v1.9.0-sandbox',
    targetKubeVirtVersion: 'v1.9.0-sandbox',
    observedKubeVirtRegistry: 'quay.io/kubevirt',
    targetKubeVirtRegistry: 'quay.io/kubevirt',
    operatorVersion: 'v1.9.0-sandbox',
    outdatedVirtualMachineInstanceWorkloads: 0,
  };
  await api.custom.patchNamespacedCustomObjectStatus({ ...coords, name: 'kubevirt', body: { status } }, MERGE_PATCH);
}

async function ensureNamespace(api: NodeSideApi, name: string): Promise<void> {
  try {
    await api.core.createNamespace({ body: { metadata: { name } } });
  } catch (err) {
    if (statusCodeOf(err) !== 409) throw err;
  }
}

/**
 * Waits until the node lifecycle controller has seen the nodes Ready and lifted the not-ready
 * taint the API server puts on every new Node (TaintNodesByCondition): only then can the real
 * scheduler place pods on them.
 */
async function waitNodesSchedulable(api: NodeSideApi, names: readonly string[]): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const nodes = (await api.core.listNode({})).items.filter((n) => names.includes(n.metadata?.name ?? ''));
    const blocked = nodes.filter((n) => (n.spec?.taints ?? []).some((t) => t.key.startsWith('node.kubernetes.io/')));
    if (nodes.length === names.length && blocked.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`nodes still tainted after 2 minutes: ${blocked.map((n) => `${n.metadata?.name} ${JSON.stringify(n.spec?.taints)}`).join('; ')}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Starts the API server and the node side; see {@link Sandbox}. */
export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const controlPlane = opts.controlPlane ?? controlPlaneFromEnv();
  const real = controlPlane === 'real';
  const speed = opts.speed ?? 1;
  // The real API server stamps objects with the wall clock: our clock is held still while the
  // cluster starts (tens of seconds, which a sped-up clock would turn into a large lead) and then
  // set to the wall clock, so simulated and server time start out together.
  const clock = opts.clock ?? createClock({ speed: real ? 0 : speed });
  // The kubelet finishes graceful deletions, as on a real cluster; the server must not.
  const apiServer = real
    ? await startRealApiServer({ clock, ...(opts.log ? { log: opts.log } : {}), ...(opts.productRbac === false ? { productRbac: false } : {}) })
    : await startApiServer({ port: opts.port ?? 0, clock, podGraceExpiry: false, users: SANDBOX_USERS, ...(opts.freezeObjects === undefined ? {} : { freezeObjects: opts.freezeObjects }), ...(opts.eventTtlMs === undefined ? {} : { eventTtlMs: opts.eventTtlMs }) });
  // virt-api's eviction webhook: a migrating VMI's launcher pod is marked and refused (429). The
  // emulator runs the decision as an in-process admission hook; the real API server calls it as
  // KubeVirt's ValidatingWebhookConfiguration on pods/eviction, served over HTTPS below.
  if (!real) apiServer.admission.onEviction(virtApiEvictionHook());
  // virt-api's migration create validator: a VMI virt-handler reports not migratable is refused.
  if (!real) apiServer.admission.onCreate(virtApiMigrationCreateHook());
  // virt-api's VMI and VM mutators: every VMI and VM created is defaulted as on a KubeVirt cluster
  // (runtimeUser, CPU model, firmware UUID, …: kubevirt/vmi-mutation.ts, vm-mutation.ts).
  if (!real) apiServer.admission.onMutateCreate(virtApiMutatingHook());
  // virt-api's identity rules (kubevirt/identity-admission.ts): a VMI status change by anyone but
  // KubeVirt's service accounts is put back, a VMI spec or reserved-label change refused, a VMI
  // created with a reserved label or a migration with a priority refused. The product writes those
  // as KubeVirt's controller (Impersonate-User: shared/kube/kubevirt-identity.ts).
  if (!real) {
    apiServer.admission.onMutateUpdate(virtApiStatusRevertHook());
    apiServer.admission.onUpdate(virtApiVmiUpdateHook());
    apiServer.admission.onCreate(virtApiIdentityCreateHook());
  }

  const started: { stop(): Promise<void> }[] = [];
  const stopAll = async () => {
    for (const c of started.splice(0).reverse()) await c.stop();
    await apiServer.close();
    if (!opts.clock) clock.dispose();
  };
  try {
    const api = nodeSideApi(kubeConfigActingAs(apiServer.kubeConfig(NODE_SIM_IDENTITY), KUBEVIRT_HANDLER_USER));
    let evictionWebhook: EvictionWebhookServer | undefined;
    if (real) {
      evictionWebhook = await startEvictionWebhookServer({ kc: apiServer.kubeConfig(VIRT_API_IDENTITY), ...(opts.onError ? { onError: opts.onError } : {}) });
      started.push(evictionWebhook);
      // virt-operator's part (the node side plays it): the configuration naming the server.
      await registerEvictionWebhook(api.kc, evictionWebhook.url, evictionWebhook.caPem);
    }
    const t = opts.timings ?? {};
    await ensureNamespace(api, 'default');
    await ensureNamespace(api, 'kubevirt');
    await createKubeVirtCr(api);
    const nodeNames = await createNodes(api, opts.nodes ?? 3, clock.isoNow(), { ...DEFAULT_NODE_SHAPE, ...opts.nodeShape }, opts.nodeShapes);
    const onError = opts.onError;
    let scheduler: Scheduler;
    if (real) {
      started.push(await startNodeLeases(api, nodeNames, onError));
      await waitNodesSchedulable(api, nodeNames);
      scheduler = { restarts: () => 0, stop: async () => undefined };
    } else {
      scheduler = await startScheduler({ api, clock, ...(onError ? { onError } : {}) });
      started.push(scheduler);
    }
    const claimFiles = new ClaimFiles();
    // The kubelet's and virt-handler's events (FailedMount, SyncFailed, Started…), as node-sim.
    const events = createEventRecorder(api, clock, onError);
    started.push({ stop: () => events.flush() });
    const kubelet = await startKubelet({ api, clock, files: claimFiles, events, ...(t.podStartupMs !== undefined ? { startupMs: t.podStartupMs } : {}), ...(onError ? { onError } : {}) });
    started.push(kubelet);
    // On the real control plane kube-controller-manager's Job controller makes Jobs' pods.
    if (!real) started.push(await startJobController({ api, clock, ...(onError ? { onError } : {}) }));
    // On the real control plane kube-controller-manager's DaemonSet controller makes the handler pods.
    const virtHandlers = await startVirtHandlerFleet({ api, clock, emulateDaemonSetController: !real, ...(opts.random ? { random: opts.random } : {}), ...(onError ? { onError } : {}) });
    started.push(virtHandlers);
    started.push(await startVirtOperator({ api, clock, ...(t.kubevirtDeployMs !== undefined ? { deployMs: t.kubevirtDeployMs } : {}), ...(onError ? { onError } : {}) }));
    const virtHandler = await startVirtHandler({
      serves: virtHandlers.serves,
      files: claimFiles,
      events,
      api,
      clock,
      ...(t.vmiBootMs !== undefined ? { bootMs: t.vmiBootMs } : {}),
      ...(t.vmiShutdownMs !== undefined ? { shutdownMs: t.vmiShutdownMs } : {}),
      ...(t.vmiHotplugMs !== undefined ? { hotplugMs: t.vmiHotplugMs } : {}),
      ...(t.migration ? { migration: t.migration } : {}),
      ...(onError ? { onError } : {}),
    });
    started.push(virtHandler);
    // Storage side: a separate, optional layer over the same API (see storage/index.ts).
    let storage: StorageAgents | undefined;
    if (opts.storage) {
      storage = await startStorageAgents({ api, clock, ...(onError ? { onError } : {}) }, opts.storage === true ? {} : opts.storage);
      started.push(storage);
      // virt-api's subresources through the API server, as its APIService serves them on a cluster
      // (KubeVirt's own virt-controller calls freeze/unfreeze that way). The emulator only: on the
      // real lane our controllers reach virt-api by its own URL (the subresource base URL).
      if (!real) apiServer.admission.aggregate('subresources.kubevirt.io', storage.virtApi.url);
    }
    const kubeconfigPath = opts.kubeconfigOut ?? join(await mkdtemp(join(tmpdir(), 'virt-reconciler-sandbox-')), 'kubeconfig');
    await apiServer.writeKubeconfig(kubeconfigPath);
    if (real && !opts.clock) {
      clock.advance(Math.max(0, Date.now() - clock.nowMs()));
      clock.setSpeed(speed);
    }
    let stopping: Promise<void> | undefined;
    const deleteNode = async (name: string) => {
      await deleteNodeWithPods(api, name);
    };
    return { apiServer, controlPlane, kubeconfigPath, clock, nodeNames, scheduler, kubelet, virtHandler, virtHandlers, claimFiles, deleteNode, ...(storage ? { storage } : {}), ...(evictionWebhook ? { evictionWebhook } : {}), stop: () => (stopping ??= stopAll()) };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
