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
 */
export const PRICES = {
  source: 'aws.amazon.com/{lambda,sqs,dynamodb}/pricing, us-east-1, as known in 2025 (not re-checked offline)',
  lambdaArmPerGbSecond: 0.0000133334,
  lambdaPerRequest: 0.2 / 1e6,
  sqsFifoPerRequest: 0.5 / 1e6,
  dynamoPerWru: 0.625 / 1e6,
  dynamoPerRru: 0.125 / 1e6,
} as const;

export interface CostInputs {
  /** Lambda memory (infra/aws/settings.ts default). */
  readonly memoryMb: number;
  /** Keys per invocation (settings default 1: FIFO, one key per invocation). */
  readonly batchSize: number;
  /** Measured wall time per reconcile, ms (Lambda bills it, waiting on the apiserver included). */
  readonly reconcileMs: number;
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
}

export interface CostBreakdown {
  readonly lambdaDuration: number;
  readonly lambdaRequests: number;
  readonly sqs: number;
  readonly dynamodb: number;
  readonly total: number;
  readonly sqsRequestsPerReconcile: number;
}

/** Dollars per million reconciles; see the module comment for prices and the inputs for assumptions. */
export function costPerMillionReconciles(i: CostInputs): CostBreakdown {
  const M = 1e6;
  const invocations = M / i.batchSize;
  // One invocation lasts as long as its slowest key; with batch 1 that is the reconcile itself.
  const gbSeconds = invocations * ((i.reconcileMs + i.coldStartShare * i.coldInitMs) / 1000) * (i.memoryMb / 1024);
  const lambdaDuration = gbSeconds * PRICES.lambdaArmPerGbSecond;
  const lambdaRequests = invocations * PRICES.lambdaPerRequest;
  // Relay SendMessageBatch (10 keys a request) + the trigger's receive and delete per batch +
  // a requeue's send to the timer queue, its receive/delete and the forward back.
  const sqsRequestsPerReconcile = i.keysSentPerReconcile / 10 + 2 / i.batchSize + i.requeuesPerReconcile * 4;
  const sqs = M * sqsRequestsPerReconcile * PRICES.sqsFifoPerRequest;
  const dynamodb = M * (i.tableReadsPerReconcile * PRICES.dynamoPerRru + i.tableWritesPerReconcile * PRICES.dynamoPerWru);
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return {
    lambdaDuration: r(lambdaDuration),
    lambdaRequests: r(lambdaRequests),
    sqs: r(sqs),
    dynamodb: r(dynamodb),
    total: r(lambdaDuration + lambdaRequests + sqs + dynamodb),
    sqsRequestsPerReconcile: r(sqsRequestsPerReconcile),
  };
}
