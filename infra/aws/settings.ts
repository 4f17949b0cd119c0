/**
 * The deployment's settings, read once from CDK context (`cdk synth -c key=value`, or cdk.json),
 * validated at this edge, plus the apiserver budget arithmetic that sizes each function's
 * `maxConcurrency` (docs/deploy-aws.md, "Concurrency and the apiserver budget").
 */
import { controllerInfo, perController } from '../../shared/controllers.ts';
import { CONTROLLERS, type Controller } from '../../shared/queue/message.ts';
import { DEFAULT_KUBEVIRT_NAMESPACE } from '../../shared/kube/kubevirt-identity.ts';

/** Where the functions reach the cluster (all three, or none: then functions use loadKubeConfig). */
export interface ClusterSettings {
  readonly name: string;
  readonly endpoint: string;
  /** Base64 PEM CA, as `aws eks describe-cluster --query cluster.certificateAuthority.data`. */
  readonly caData: string;
}

/** Optional VPC placement (private API endpoint clusters). Offline: ids only, no lookups. */
export interface VpcSettings {
  readonly vpcId: string;
  readonly subnetIds: readonly string[];
  readonly securityGroupIds: readonly string[];
  readonly availabilityZones: readonly string[];
}

export interface BudgetSettings {
  /** The apiserver QPS all functions together may use (virt-controller's client default: 200). */
  readonly apiQpsBudget: number;
  /** Upper bound of API calls one reconcile makes (docs/architecture.md §3: ≤ 3 reads + 1–2 writes). */
  readonly apiCallsPerReconcile: number;
  /** Wall time of one reconcile, so one in-flight reconcile makes calls/seconds QPS. */
  readonly reconcileSeconds: number;
}

export interface ReconcilerSettings {
  /** Name prefix of every resource (queues `<prefix>-<controller>.fifo`, as shared/queue/sqs-queue.ts). */
  readonly prefix: string;
  readonly cluster?: ClusterSettings;
  /** Create an EKS access entry per function role (needs `cluster`). */
  readonly createAccessEntries: boolean;
  /** The Kubernetes group the access entries map the roles to (infra/kubernetes binds it). */
  readonly kubernetesGroup: string;
  readonly vpc?: VpcSettings;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  /** Keys per Lambda invocation (an SQS FIFO trigger hands at most 10; default 10). */
  readonly batchSize: number;
  /**
   * Keys of a batch reconciled at once (lambda-batch.ts `maxInFlight`, KEY_BATCH_CONCURRENCY);
   * default 1: a batch runs its keys one after another, so batching leaves the reconciles in
   * flight per instance — and the apiserver plan — as at batch 1.
   */
  readonly batchConcurrency: number;
  readonly maxReceiveCount: number;
  readonly budget: BudgetSettings;
  readonly maxConcurrency: Readonly<Record<Controller, number>>;
  /** EMF namespace of our own metrics. */
  readonly metricsNamespace: string;
  /**
   * KubeVirt's install namespace (`-c kubevirtNamespace=`, default `kubevirt`): the functions'
   * `KUBEVIRT_NAMESPACE`, whose `kubevirt-controller` their VMI writes act as (docs/kube-client.md)
   * and where virt-controller's Lease is (docs/cutover.md).
   */
  readonly kubevirtNamespace: string;
  /** SNS topic ARN for alarm actions (optional). */
  readonly alarmTopicArn?: string;
  readonly logRetentionDays: number;
  /**
   * The cutover (docs/cutover.md): `normal` — the functions write while virt-controller's Lease is
   * ours; `shadow` — every write a dry run while it is not. Must match the chart's `mode`.
   */
  readonly mode: 'normal' | 'shadow';
  /** Our holder identity in the Lease (which is in `kubevirtNamespace`). */
  readonly leaseIdentity: string;
}

/**
 * The reconcile functions' memory (MB), unless `-c memoryMb=` says otherwise. Lambda's CPU comes
 * with it (a full vCPU at 1,769 MB); docs/scale.md, "Memory and CPU", weighs the sizes.
 */
export const DEFAULT_MEMORY_MB = 512;
/** Keys per invocation by default: an SQS FIFO trigger's most. */
export const DEFAULT_BATCH_SIZE = 10;

/** AWS's floor for an SQS event source's maximum concurrency. */
export const MIN_SQS_MAX_CONCURRENCY = 2;
/**
 * SQS's maximum, as SqsKeyQueue.ensureQueues sets it (SQS_MAX_RECEIVE_COUNT, shared/queue/sqs-queue.ts):
 * the redrive counts receives only, and must not dead-letter a key before our retry policy's
 * window (DEFAULT_RETRY: 16 failures AND an hour of failing, about 22 receives). Set lower, a key
 * retrying through a long API server outage could be moved without a reason.
 */
export const DEFAULT_MAX_RECEIVE_COUNT = 1000;
export const DEFAULT_METRICS_NAMESPACE = 'VirtReconciler';

export const DEFAULT_BUDGET: BudgetSettings = {
  apiQpsBudget: 200,
  apiCallsPerReconcile: 5,
  // docs/architecture.md §3: "≈ 7 busy functions can use up the 200 QPS budget" → one sequential worker
  // ≈ 28.6 QPS → at 5 calls a reconcile takes ≈ 0.175 s.
  reconcileSeconds: 0.175,
};

/** Share of the in-flight budget by controller, from the registry (VMIs are the most numerous keys). */
const WEIGHTS: Readonly<Record<Controller, number>> = perController((c) => controllerInfo(c).weight);

export interface ConcurrencyPlan {
  readonly perReconcileQps: number;
  /** Reconciles that may be in flight at once across all functions. */
  readonly inFlightBudget: number;
  readonly maxConcurrency: Readonly<Record<Controller, number>>;
  /** Reconciles one instance has in flight: min(batchSize, batchConcurrency). */
  readonly inFlightPerInstance: number;
  /** Peak QPS of the plan: Σ maxConcurrency × inFlightPerInstance × perReconcileQps. */
  readonly peakQps: number;
  /** Set when Lambda's floor (2 per source) forces the plan over the budget. */
  readonly overBudget: boolean;
}

/**
 * Sizes `maxConcurrency` so that all functions together stay inside the apiserver budget:
 * instances = floor(budget / (inFlightPerInstance × calls / reconcileSeconds)), split by weight,
 * at least 2; an instance has min(batchSize, batchConcurrency) reconciles in flight.
 */
export function planConcurrency(budget: BudgetSettings, batchSize: number, batchConcurrency = batchSize): ConcurrencyPlan {
  const inFlightPerInstance = Math.max(1, Math.min(batchSize, batchConcurrency));
  const perReconcileQps = budget.apiCallsPerReconcile / budget.reconcileSeconds;
  // Rounded first: 200 × 0.175 / 5 is 7.000000000000001 in floating point.
  const inFlightBudget = Math.floor(Number((budget.apiQpsBudget / perReconcileQps).toFixed(6)));
  const instances = Math.floor(inFlightBudget / inFlightPerInstance);
  const total = CONTROLLERS.reduce((s, c) => s + WEIGHTS[c], 0);
  const share = Object.fromEntries(CONTROLLERS.map((c) => [c, Math.floor((instances * WEIGHTS[c]) / total)])) as Record<Controller, number>;
  // Largest weight first gets what the floors left over.
  let left = instances - CONTROLLERS.reduce((s, c) => s + share[c], 0);
  for (const c of [...CONTROLLERS].sort((a, b) => WEIGHTS[b] - WEIGHTS[a])) if (left-- > 0) share[c]++;
  const maxConcurrency = Object.fromEntries(CONTROLLERS.map((c) => [c, Math.max(MIN_SQS_MAX_CONCURRENCY, share[c])])) as Record<Controller, number>;
  const peakQps = CONTROLLERS.reduce((s, c) => s + maxConcurrency[c], 0) * inFlightPerInstance * perReconcileQps;
  return { perReconcileQps, inFlightBudget, inFlightPerInstance, maxConcurrency, peakQps, overBudget: peakQps > budget.apiQpsBudget + 1e-6 };
}

/** Reads a context value (`app.node.tryGetContext`). */
export type ContextReader = (key: string) => unknown;

/** Settings from context, with defaults; throws naming the key on a bad value. */
export function readSettings(ctx: ContextReader): ReconcilerSettings {
  const str = (k: string): string | undefined => {
    const v = ctx(k);
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') throw new Error(`context ${k}: expected a string, got ${JSON.stringify(v)}`);
    return v;
  };
  const num = (k: string, dflt: number, min: number, max: number): number => {
    const raw = ctx(k);
    if (raw === undefined || raw === null || raw === '') return dflt;
    const v = typeof raw === 'number' ? raw : Number(raw);
    if (!Number.isFinite(v) || v < min || v > max) throw new Error(`context ${k}: expected a number in [${min}, ${max}], got ${JSON.stringify(raw)}`);
    return v;
  };
  const list = (k: string): string[] => (str(k) ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const bool = (k: string, dflt: boolean): boolean => {
    const v = ctx(k);
    return v === undefined ? dflt : v === true || v === 'true';
  };

  const prefix = str('prefix') ?? 'virt-reconciler';
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(prefix)) throw new Error(`context prefix: letters, digits, - and _ only (≤ 40), got "${prefix}"`);
  const [name, endpoint, caData] = [str('clusterName'), str('clusterEndpoint'), str('clusterCaData')];
  const given = [name, endpoint, caData].filter((x) => x !== undefined).length;
  if (given !== 0 && given !== 3) throw new Error('context clusterName, clusterEndpoint and clusterCaData go together');
  if (endpoint !== undefined && !endpoint.startsWith('https://')) throw new Error(`context clusterEndpoint: must be https://, got "${endpoint}"`);
  const cluster = name !== undefined && endpoint !== undefined && caData !== undefined ? { name, endpoint, caData } : undefined;

  const vpcId = str('vpcId');
  const vpc =
    vpcId === undefined
      ? undefined
      : { vpcId, subnetIds: list('subnetIds'), securityGroupIds: list('securityGroupIds'), availabilityZones: list('availabilityZones') };
  if (vpc !== undefined && (vpc.subnetIds.length === 0 || vpc.securityGroupIds.length === 0)) {
    throw new Error('context vpcId needs subnetIds and securityGroupIds (comma-separated)');
  }

  const timeoutSeconds = num('timeoutSeconds', 60, 5, 900);
  // A FIFO event source allows at most 10 records and no batching window (docs/platform.md).
  // Default 10, its keys one at a time (batchConcurrency 1): batch 1's reconciles in flight and
  // QPS plan, with one invocation, one receive and one trace write per batch instead of per key
  // (docs/deploy-aws.md "Batching"; about a fifth of batch 1's cost per reconcile).
  const batchSize = num('batchSize', DEFAULT_BATCH_SIZE, 1, 10);
  const batchConcurrency = num('batchConcurrency', 1, 1, 10);
  const budget: BudgetSettings = {
    apiQpsBudget: num('apiQpsBudget', DEFAULT_BUDGET.apiQpsBudget, 1, 100_000),
    apiCallsPerReconcile: num('apiCallsPerReconcile', DEFAULT_BUDGET.apiCallsPerReconcile, 1, 1000),
    reconcileSeconds: num('reconcileSeconds', DEFAULT_BUDGET.reconcileSeconds, 0.001, 900),
  };
  const plan = planConcurrency(budget, batchSize, batchConcurrency);
  const maxConcurrency = Object.fromEntries(
    CONTROLLERS.map((c) => [c, num(`${c}MaxConcurrency`, plan.maxConcurrency[c], MIN_SQS_MAX_CONCURRENCY, 1000)]),
  ) as Record<Controller, number>;
  const alarmTopicArn = str('alarmTopicArn');
  const mode = str('mode') ?? 'normal';
  if (mode !== 'normal' && mode !== 'shadow') throw new Error(`context mode: expected normal or shadow, got ${JSON.stringify(mode)}`);
  return {
    prefix,
    ...(cluster !== undefined ? { cluster } : {}),
    createAccessEntries: bool('createAccessEntries', cluster !== undefined),
    kubernetesGroup: str('kubernetesGroup') ?? 'virt-reconciler:functions',
    ...(vpc !== undefined ? { vpc } : {}),
    memoryMb: num('memoryMb', DEFAULT_MEMORY_MB, 128, 10_240),
    timeoutSeconds,
    batchSize,
    batchConcurrency,
    maxReceiveCount: num('maxReceiveCount', DEFAULT_MAX_RECEIVE_COUNT, 1, 1000),
    budget,
    maxConcurrency,
    metricsNamespace: str('metricsNamespace') ?? DEFAULT_METRICS_NAMESPACE,
    kubevirtNamespace: str('kubevirtNamespace') ?? DEFAULT_KUBEVIRT_NAMESPACE,
    ...(alarmTopicArn !== undefined ? { alarmTopicArn } : {}),
    logRetentionDays: num('logRetentionDays', 30, 1, 3653),
    mode,
    leaseIdentity: str('leaseIdentity') ?? 'virt-reconciler',
  };
}

/** AWS guidance for an SQS event source: visibility timeout ≥ 6 × the function timeout. */
export function visibilityTimeoutFor(functionTimeoutSeconds: number): number {
  return 6 * functionTimeoutSeconds;
}
