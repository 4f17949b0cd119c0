/**
 * Faults of the AWS backends, injected as AWS SDK middleware (`client.middlewareStack.add`) on the
 * real SDK clients the SQS queue and the DynamoDB table use — the backends (fauxqs, DynamoDB
 * Local) and our adapters are untouched:
 *
 * - throttling: DynamoDB's `ProvisionedThroughputExceededException` / `ThrottlingException`, SQS's
 *   `ThrottlingException` / `RequestThrottled`, as the service answers them (HTTP 400, the SDK's
 *   retry strategy recognises them by name);
 * - 5xx: `InternalServerError` / `InternalError` with HTTP 500 (or 503);
 * - timeouts: a `TimeoutError` (the SDK's socket timeout), half of them AFTER the request reached
 *   the service, so the caller cannot tell whether a write happened (a retried conditional write
 *   then fails its own condition);
 * - lost heartbeats: an SQS `ChangeMessageVisibilityBatch` that extends a lease answered "done"
 *   without being sent, so the message's visibility lapses while its reconcile still runs and
 *   another worker receives it.
 *
 * The middleware sits in the `deserialize` step, inside the SDK's retry loop: a single fault is
 * retried by the SDK as in production, and a burst (`burst()`: every call of the next N fails)
 * gets through the SDK's three attempts to our adapters and the reconcile's own retry.
 */
import { ProvisionedThroughputExceededException, ThrottlingException, InternalServerError, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSServiceException, type SQSClient } from '@aws-sdk/client-sqs';

type Service = 'sqs' | 'dynamodb';
type Fault = 'throttle' | '5xx' | 'timeout';

/** The counters a fault injector keeps, by fault. */
export interface AwsFaultCounts {
  awsThrottles: number;
  aws5xx: number;
  awsTimeouts: number;
  /** Timeouts raised after the request had reached the service (outcome unknown to the caller). */
  awsTimeoutsAfterWrite: number;
  lostHeartbeats: number;
}

const metadata = (httpStatusCode: number) => ({ httpStatusCode, requestId: 'chaos', attempts: 1, totalRetryDelay: 0 });

function serviceError(service: Service, fault: Exclude<Fault, 'timeout'>, command: string, random: () => number): Error {
  const message = `chaos: ${command} ${fault === 'throttle' ? 'throttled' : 'failed on the server'}`;
  if (service === 'dynamodb') {
    if (fault === 'throttle') {
      return random() < 0.7
        ? new ProvisionedThroughputExceededException({ message, $metadata: metadata(400) })
        : new ThrottlingException({ message, $metadata: metadata(400) });
    }
    return new InternalServerError({ message, $metadata: metadata(500) });
  }
  const [name, status, fault$] = fault === 'throttle' ? [random() < 0.7 ? 'ThrottlingException' : 'RequestThrottled', 400, 'client' as const] : ['InternalError', random() < 0.5 ? 500 : 503, 'server' as const];
  return new SQSServiceException({ name, $fault: fault$, message, $metadata: metadata(status) });
}

function timeoutError(command: string): Error {
  return Object.assign(new Error(`chaos: ${command} timed out (socket timeout)`), { name: 'TimeoutError', code: 'ETIMEDOUT', $metadata: {} });
}

/** Arms and counts the faults of every client it was attached to. */
export class AwsFaults {
  armed = true;
  readonly counts: AwsFaultCounts = { awsThrottles: 0, aws5xx: 0, awsTimeouts: 0, awsTimeoutsAfterWrite: 0, lostHeartbeats: 0 };
  readonly #random: () => number;
  readonly #rate: number;
  readonly #heartbeatLoss: number;
  #burst = 0;

  /**
   * `rate`: probability per request of a fault (40 % throttles, 30 % 5xx, 30 % timeouts);
   * `heartbeatLoss`: probability that a lease extension is lost.
   */
  constructor(random: () => number, rate = 0.03, heartbeatLoss = 0.05) {
    this.#random = random;
    this.#rate = rate;
    this.#heartbeatLoss = heartbeatLoss;
  }

  /** The next `requests` requests (of any attached client) all fail: enough to get past the SDK's retries. */
  burst(requests: number): void {
    this.#burst += requests;
  }

  /** Adds the fault middleware to a client. */
  attach(client: SQSClient | DynamoDBClient, service: Service): void {
    type Mw = (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => (args: unknown) => Promise<unknown>;
    const stack = client.middlewareStack as unknown as { add(mw: Mw, opts: { step: 'initialize' | 'deserialize'; name: string; priority?: 'low' }): void };
    // A lease extension (a ChangeMessageVisibilityBatch with a non-zero timeout) "lost": answered
    // as done without being sent, so the visibility lapses under a running reconcile. Outermost
    // (initialize step), so neither the retry loop nor the deserializer sees it.
    if (service === 'sqs') {
      stack.add(
        (next, context) => async (args) => {
          if (this.armed && context.commandName === 'ChangeMessageVisibilityBatchCommand' && isExtension(args) && this.#random() < this.#heartbeatLoss) {
            this.counts.lostHeartbeats++;
            return { response: { statusCode: 200, headers: {} }, output: { Successful: [], Failed: [], $metadata: metadata(200) } };
          }
          return next(args);
        },
        { step: 'initialize', name: 'chaosLostHeartbeats' },
      );
    }
    // Innermost (deserialize step, low priority: just above the HTTP handler, inside the retries).
    stack.add(
      (next, context) => async (args) => {
        const command = context.commandName ?? 'request';
        if (!this.armed) return next(args);
        const inBurst = this.#burst > 0;
        if (inBurst) this.#burst--;
        if (!inBurst && this.#random() >= this.#rate) return next(args);
        const pick = this.#random();
        if (pick < 0.4) {
          this.counts.awsThrottles++;
          throw serviceError(service, 'throttle', command, this.#random);
        }
        if (pick < 0.7) {
          this.counts.aws5xx++;
          throw serviceError(service, '5xx', command, this.#random);
        }
        this.counts.awsTimeouts++;
        if (this.#random() < 0.5) {
          this.counts.awsTimeoutsAfterWrite++;
          await next(args);
        }
        throw timeoutError(command);
      },
      { step: 'deserialize', name: 'chaosFaults', priority: 'low' },
    );
  }
}

/** True when a ChangeMessageVisibilityBatch request extends visibility (rather than handing back with 0). */
function isExtension(args: unknown): boolean {
  const input = (args as { input?: { Entries?: { VisibilityTimeout?: number }[] } }).input;
  return (input?.Entries ?? []).every((e) => (e.VisibilityTimeout ?? 0) > 0);
}
