/**
 * The one DynamoDB table behind the AWS StateStore: its key layout, its creation for tests and
 * local use, and the error mapping every call goes through. Design: docs/state.md.
 *
 * | item        | pk                  | sk            | attributes                                   |
 * |-------------|---------------------|---------------|----------------------------------------------|
 * | expectation | `exp#<scope>`       | `<key>`       | add, del, deleteKeys (string set), setAt, ttl |
 * | failures    | `fail#<scope>`      | `<key>`       | count, updatedAt, ttl                        |
 * | lease       | `lease#<counter>`   | `-`           | holders (map holder → expiresAt ms), ttl     |
 * | traces      | `tracebatch#<ctl>#<hour>` | `<ms>#<rand>` | z (one invocation's entries, deflated JSON), ks (their keys, string set), expiresAt, ttl |
 * | trace entry (earlier layout, read only) | `trace#<ctl>#<key>` | `<ms>#<rand>` | e (the entry as JSON), expiresAt, ttl |
 * | shadow divergence (shared/cutover/divergence-store.ts) | `shadowdiv` | `<controller>\|<key>\|<write>\|<object>\|<paths>` | controller, key, write, object, fields (JSON), firstAt, lastAt, count, ttl |
 *
 * `ttl` is epoch seconds (the table's TTL attribute); `setAt`, `updatedAt`, `expiresAt` are
 * epoch ms compared by our own code, because DynamoDB deletes expired items lazily.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  UpdateTimeToLiveCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { TransientError } from '../errors.ts';

/** The environment variable that names the table in production (set by the CDK stack). */
export const STATE_TABLE_ENV = 'STATE_TABLE_NAME';

/** Partition and sort key of an item. */
export interface ItemKey {
  readonly pk: string;
  readonly sk: string;
}

export const expectationKey = (scope: string, key: string): ItemKey => ({ pk: `exp#${scope}`, sk: key });
export const failureKey = (scope: string, key: string): ItemKey => ({ pk: `fail#${scope}`, sk: key });
export const leaseKey = (counter: string): ItemKey => ({ pk: `lease#${counter}`, sk: '-' });
/** The partition of one key's trace entries in the earlier layout, still read until their TTL (dynamodb-traces.ts). */
export const traceKeyPrefix = (controller: string, key: string): string => `trace#${controller}#${key}`;

/** Epoch seconds for the `ttl` attribute: when DynamoDB may delete an item that expires at `ms`. */
export function ttlSeconds(ms: number): number {
  return Math.ceil(ms / 1000);
}

/** True for the error a failed ConditionExpression raises (single write or Get-less update). */
export function isConditionFailed(err: unknown): boolean {
  return err instanceof Error && err.name === 'ConditionalCheckFailedException';
}

/**
 * Runs one SDK call; anything but a failed condition becomes a TransientError (throttling, a
 * network error, a 5xx: the reconcile is retried with backoff), keeping the SDK error as cause.
 */
export async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isConditionFailed(err)) throw err;
    const detail = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    throw new TransientError('StateStoreError', `DynamoDB ${what} failed: ${detail}`, { cause: err });
  }
}

/**
 * Creates the table (on-demand, pk/sk strings) with TTL on `ttl`, if it does not exist, and
 * waits until it is ACTIVE. For tests and local use: in production the CDK stack owns the table.
 */
export async function ensureTable(client: DynamoDBClient, tableName: string, waitMs = 30_000): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
      }),
    );
  } catch (err) {
    if (!(err instanceof Error && err.name === 'ResourceInUseException')) throw err;
  }
  const deadline = Date.now() + waitMs;
  // Polled by hand: the SDK waiter's 20 s minimum delay would dominate a test run (docs/platform.md).
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') break;
    if (Date.now() > deadline) throw new Error(`table ${tableName} is still ${Table?.TableStatus} after ${waitMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
  try {
    await client.send(
      new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true } }),
    );
  } catch (err) {
    // Enabling TTL twice is a ValidationException ("TimeToLive is already enabled").
    if (!(err instanceof Error && err.name === 'ValidationException' && /already enabled/i.test(err.message))) throw err;
  }
}
