/**
 * Cost per million reconciles on AWS, from measured figures and published prices.
 *
 * Prices: us-east-1, on-demand, as published on the AWS pricing pages below, as the author knew
 * them in 2025 (this machine has no network to re-check them — verify before quoting):
 * - Lambda (https://aws.amazon.com/lambda/pricing/): arm64 $0.0000133334 per GB-second (first
 *   7.5 billion GB-s a month), $0.20 per million requests. Since 2025-08-01 the INIT phase of
 *   on-demand functions is billed as duration too.
 * - SQS (https://aws.amazon.com/sqs/pricing/): FIFO $0.50 per million requests (each 64 KB
 *   chunk of a payload is one request; a batch of up to 10 messages is one request).
 * - DynamoDB (https://aws.amazon.com/dynamodb/pricing/on-demand/): on-demand $0.625 per million
 *   write request units, $0.125 per million read request units (since the 2024-11-01 price cut;
 *   a strongly consistent read of ≤ 4 KB = 1 RRU, a write of ≤ 1 KB = 1 WRU, conditional or not).
 * - CloudWatch Logs (https://aws.amazon.com/cloudwatch/pricing/): $0.50 per GB ingested (standard
 *   log class). Reported beside the total, not in it (the model's scope since it was set: Lambda,
 *   SQS, DynamoDB).
 */
export const PRICES = {
  source: 'aws.amazon.com/{lambda,sqs,dynamodb}/pricing, us-east-1, as known in 2025 (not re-checked offline)',
  lambdaArmPerGbSecond: 0.0000133334,
  lambdaPerRequest: 0.2 / 1e6,
  sqsFifoPerRequest: 0.5 / 1e6,
  dynamoPerWru: 0.625 / 1e6,
  dynamoPerRru: 0.125 / 1e6,
  cloudwatchLogsPerGb: 0.5,
} as const;

/**
 * Lambda's CPU is proportional to its memory: one full vCPU at 1,769 MB
 * (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html). Below it, CPU work
 * takes 1,769 / memory times as long; above it a single-threaded function gains nothing.
 */
export const LAMBDA_FULL_VCPU_MB = 1769;

/** The memory sizes the model compares (MB). */
export const MEMORY_SIZES_MB = [128, 256, 512, 1024, 1769] as const;

/** How much longer CPU work takes at `memoryMb` than on a full vCPU. */
export function cpuStretch(memoryMb: number): number {
  return Math.max(1, LAMBDA_FULL_VCPU_MB / memoryMb);
}

export interface CostInputs {
  /** Lambda memory (infra/aws/settings.ts default). */
  readonly memoryMb: number;
  /**
   * CPU time of one invocation on a full vCPU, ms (the function footprint benchmark). The
   * measured wall time already holds it once; at less than a full vCPU it is stretched
   * ({@link cpuStretch}). Undefined: the wall time is billed as measured (the old model).
   */
  readonly cpuMsPerInvocation?: number;
  /** Keys per invocation (settings default 1: FIFO, one key per invocation; a batch as it came). */
  readonly batchSize: number;
  /**
   * Measured wall time of one invocation, ms (Lambda bills it, waiting on the apiserver
   * included): at batch 1 the reconcile; at a larger batch all its keys, one after another or
   * together as KEY_BATCH_CONCURRENCY has them, plus the one packed trace write.
   */
  readonly invocationMs: number;
  /** Share of invocations that are cold, and what a cold start costs in billed init, ms. */
  readonly coldStartShare: number;
  readonly coldInitMs: number;
  /** Keys sent per reconcile (relay sends after coalescing ≈ 1), sent in batches of 10. */
  readonly keysSentPerReconcile: number;
  /** Measured table operations per reconcile. */
  readonly tableReadsPerReconcile: number;
  readonly tableWritesPerReconcile: number;
  /** Requeue-after timers per reconcile (each a send to the timer queue + a forward). */
  readonly requeuesPerReconcile: number;
  /** Bytes the function logs per reconcile (JSON lines and EMF metrics), when measured. */
  readonly logBytesPerReconcile?: number;
}

export interface CostBreakdown {
  readonly memoryMb: number;
  /** What one invocation is billed for, ms (its CPU stretched at this memory, cold starts spread). */
  readonly billedMsPerInvocation: number;
  readonly lambdaDuration: number;
  readonly lambdaRequests: number;
  readonly sqs: number;
  readonly dynamodb: number;
  readonly total: number;
  /** CloudWatch Logs ingestion, beside the total (undefined when the log volume was not measured). */
  readonly logs?: number;
  readonly sqsRequestsPerReconcile: number;
}

/** Dollars per million reconciles; see the module comment for prices and the inputs for assumptions. */
export function costPerMillionReconciles(i: CostInputs): CostBreakdown {
  const M = 1e6;
  const invocations = M / i.batchSize;
  // The invocation's measured wall time holds its CPU part once; that part, and the cold import
  // (CPU throughout), run slower on less than a full vCPU.
  const stretch = cpuStretch(i.memoryMb);
  const invocationMs = i.invocationMs + (i.cpuMsPerInvocation ?? 0) * (stretch - 1) + i.coldStartShare * i.coldInitMs * (i.cpuMsPerInvocation === undefined ? 1 : stretch);
  const gbSeconds = invocations * (invocationMs / 1000) * (i.memoryMb / 1024);
  const lambdaDuration = gbSeconds * PRICES.lambdaArmPerGbSecond;
  const lambdaRequests = invocations * PRICES.lambdaPerRequest;
  // Relay SendMessageBatch (10 keys a request) + the trigger's receive and delete per batch +
  // a requeue's send to the timer queue, its receive/delete and the forward back.
  const sqsRequestsPerReconcile = i.keysSentPerReconcile / 10 + 2 / i.batchSize + i.requeuesPerReconcile * 4;
  const sqs = M * sqsRequestsPerReconcile * PRICES.sqsFifoPerRequest;
  const dynamodb = M * (i.tableReadsPerReconcile * PRICES.dynamoPerRru + i.tableWritesPerReconcile * PRICES.dynamoPerWru);
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return {
    memoryMb: i.memoryMb,
    billedMsPerInvocation: Math.round(invocationMs * 10) / 10,
    lambdaDuration: r(lambdaDuration),
    lambdaRequests: r(lambdaRequests),
    sqs: r(sqs),
    dynamodb: r(dynamodb),
    total: r(lambdaDuration + lambdaRequests + sqs + dynamodb),
    ...(i.logBytesPerReconcile !== undefined ? { logs: r((M * i.logBytesPerReconcile / 1024 ** 3) * PRICES.cloudwatchLogsPerGb) } : {}),
    sqsRequestsPerReconcile: r(sqsRequestsPerReconcile),
  };
}

/**
 * The rounds of the function footprint benchmark, each priced by report.ts: the batch size (SQS
 * trigger `batchSize`) and the keys of a batch reconciled at once (KEY_BATCH_CONCURRENCY, which
 * the CDK stack sets from `-c batchConcurrency`, default 1). `key` names the round's figures in
 * the results; `batch10` is the round the benchmark ran before it had the one-at-a-time round.
 */
export interface FootprintRound {
  readonly key: string;
  readonly label: string;
  readonly batchSize: number;
  readonly keyConcurrency: number;
}
export const FOOTPRINT_ROUNDS: readonly FootprintRound[] = [
  { key: 'batch1', label: 'batch 1 (-c batchSize=1)', batchSize: 1, keyConcurrency: 1 },
  { key: 'batch10OneAtATime', label: 'batch 10, keys one at a time (the default: batchSize 10, batchConcurrency 1)', batchSize: 10, keyConcurrency: 1 },
  { key: 'batch10', label: 'batch 10, keys all at once (-c batchConcurrency=10)', batchSize: 10, keyConcurrency: 10 },
];

/**
 * The cost at each memory size that holds the function (at least `minMemoryMb`: its measured peak
 * with headroom), and the cheapest of them. Without a measured CPU time every size bills the same
 * wall time, so the smallest that fits would always win: then only `inputs.memoryMb` is costed.
 * With it, too, the smallest that fits wins below a full vCPU: CPU work costs the same GB-seconds
 * at any size there (slower in proportion to smaller), and the waiting part costs less the smaller
 * the function. What a smaller size costs instead is time: each invocation takes longer.
 */
export function costByMemory(inputs: CostInputs, minMemoryMb: number): { cheapest: CostBreakdown; sizes: CostBreakdown[] } {
  const sizes = (inputs.cpuMsPerInvocation === undefined ? [inputs.memoryMb] : MEMORY_SIZES_MB.filter((m) => m >= minMemoryMb)).map((memoryMb) => costPerMillionReconciles({ ...inputs, memoryMb }));
  const cheapest = sizes.reduce((a, b) => (b.total < a.total ? b : a));
  return { cheapest, sizes };
}
