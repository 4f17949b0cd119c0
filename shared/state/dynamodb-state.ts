/**
 * The AWS StateStore over one DynamoDB table (layout in ./dynamodb-table.ts, docs/state.md).
 *
 * Every mutation is a single conditional write or atomic update expression, so any number of
 * Lambda instances can race on one key: `tryExpectCreations` admits exactly one of them,
 * `creationObserved` / `deletionObserved` are server-side decrements, leases never exceed their
 * limit. Reads are strongly consistent. Expired items are filtered by our own code (DynamoDB's
 * TTL deletes lazily); `ttl` only garbage-collects them.
 *
 * Production: the table comes from the CDK stack, its name from `STATE_TABLE_NAME`, the endpoint
 * and credentials from the SDK's usual chain (`AWS_ENDPOINT_URL_DYNAMODB` points it at DynamoDB
 * Local).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { InvalidInputError, TransientError } from '../errors.ts';
import { dynamoLeases } from './dynamodb-leases.ts';
import { dynamoTraces } from './dynamodb-traces.ts';
import { call, expectationKey, failureKey, isConditionFailed, STATE_TABLE_ENV, ttlSeconds } from './dynamodb-table.ts';
import {
  EXPECTATIONS_TIMEOUT_MS,
  FAILURE_COUNT_TTL_MS,
  isExpectationSatisfied,
  type ExpectationRecord,
  type Expectations,
  type FailureCounts,
  type StateStore,
} from './port.ts';
import { GC_GRACE_MS, requireCount, requireName, requireTime, uniqueKeys } from './validate.ts';

export { ensureTable, STATE_TABLE_ENV } from './dynamodb-table.ts';

export interface DynamoDbStateOptions {
  /** Defaults to `process.env.STATE_TABLE_NAME`. */
  readonly tableName?: string;
  /** A client to share; `close()` leaves it open. Without one, a client from the default chain. */
  readonly client?: DynamoDBClient;
}

/** Opens the DynamoDB StateStore (the table must exist: CDK, or `ensureTable` locally). */
export function openDynamoDbState(options: DynamoDbStateOptions = {}): StateStore {
  const tableName = options.tableName ?? process.env[STATE_TABLE_ENV];
  if (!tableName) throw new InvalidInputError(STATE_TABLE_ENV, 'the state table name is not set');
  const owned = options.client === undefined;
  const client = options.client ?? new DynamoDBClient({});
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  return {
    expectations: dynamoExpectations(doc, tableName),
    failures: dynamoFailures(doc, tableName),
    leases: dynamoLeases(doc, tableName),
    traces: dynamoTraces(doc, tableName),
    close: async () => {
      if (owned) client.destroy();
    },
  };
}

/** Runs an update; a failed condition returns false instead of throwing. */
async function conditionalUpdate(doc: DynamoDBDocumentClient, input: UpdateCommandInput): Promise<boolean> {
  try {
    await call('UpdateItem', () => doc.send(new UpdateCommand(input)));
    return true;
  } catch (err) {
    if (isConditionFailed(err)) return false;
    throw err;
  }
}

interface ExpectationItem {
  add: number;
  del: number;
  deleteKeys?: Set<string>;
  setAt: number;
}

function dynamoExpectations(doc: DynamoDBDocumentClient, tableName: string): Expectations {
  const check = (scope: string, key: string): void => {
    requireName('scope', scope);
    requireName('key', key);
  };
  const names = { '#add': 'add', '#del': 'del', '#setAt': 'setAt', '#ttl': 'ttl' };
  const expiry = (now: number): number => ttlSeconds(now + EXPECTATIONS_TIMEOUT_MS + GC_GRACE_MS);

  // SET of the counters only: deleteKeys stays (KubeVirt's UID set is a separate store).
  const setCounters = (scope: string, key: string, add: number, del: number, now: number): Promise<boolean> =>
    conditionalUpdate(doc, {
      TableName: tableName,
      Key: expectationKey(scope, key),
      UpdateExpression: 'SET #add = :add, #del = :del, #setAt = :now, #ttl = :ttl',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':add': add, ':del': del, ':now': now, ':ttl': expiry(now) },
    });

  const read = async (scope: string, key: string): Promise<ExpectationRecord | undefined> => {
    const out = await call('GetItem', () =>
      doc.send(new GetCommand({ TableName: tableName, Key: expectationKey(scope, key), ConsistentRead: true })),
    );
    const item = out.Item as ExpectationItem | undefined;
    if (!item) return undefined;
    return { add: item.add, del: item.del, deleteKeys: [...(item.deleteKeys ?? [])].sort(), setAt: item.setAt };
  };

  return {
    async expectCreations(scope, key, n, now) {
      check(scope, key);
      requireCount('n', n);
      requireTime('now', now);
      await setCounters(scope, key, n, 0, now);
    },
    async expectDeletions(scope, key, deleteKeys, now) {
      check(scope, key);
      requireTime('now', now);
      const keys = uniqueKeys(deleteKeys);
      // DynamoDB has no empty string set: an empty expectation is the attribute's absence.
      const setKeys = keys.length > 0 ? ', #dk = :dk' : '';
      const removeKeys = keys.length > 0 ? '' : ' REMOVE #dk';
      await conditionalUpdate(doc, {
        TableName: tableName,
        Key: expectationKey(scope, key),
        UpdateExpression: `SET #add = :zero, #del = :del, #setAt = :now, #ttl = :ttl${setKeys}${removeKeys}`,
        ExpressionAttributeNames: { ...names, '#dk': 'deleteKeys' },
        ExpressionAttributeValues: {
          ':zero': 0,
          ':del': keys.length,
          ':now': now,
          ':ttl': expiry(now),
          ...(keys.length > 0 ? { ':dk': new Set(keys) } : {}),
        },
      });
    },
    async setExpectations(scope, key, add, del, now) {
      check(scope, key);
      requireCount('add', add);
      requireCount('del', del);
      requireTime('now', now);
      await setCounters(scope, key, add, del, now);
    },
    async creationObserved(scope, key) {
      check(scope, key);
      // attribute_exists: no record → no-op (an update would otherwise create one).
      await conditionalUpdate(doc, {
        TableName: tableName,
        Key: expectationKey(scope, key),
        UpdateExpression: 'SET #add = #add - :one',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#add': 'add' },
        ExpressionAttributeValues: { ':one': 1 },
      });
    },
    async deletionObserved(scope, key, deleteKey) {
      check(scope, key);
      requireName('deleteKey', deleteKey);
      // contains(): only a key still in the set counts, so a pod seen deleted twice counts once.
      await conditionalUpdate(doc, {
        TableName: tableName,
        Key: expectationKey(scope, key),
        UpdateExpression: 'SET #del = #del - :one DELETE #dk :k',
        ConditionExpression: 'contains(#dk, :dk)',
        ExpressionAttributeNames: { '#del': 'del', '#dk': 'deleteKeys' },
        ExpressionAttributeValues: { ':one': 1, ':k': new Set([deleteKey]), ':dk': deleteKey },
      });
    },
    async satisfied(scope, key, now) {
      check(scope, key);
      const record = await read(scope, key);
      return isExpectationSatisfied(record, now);
    },
    async get(scope, key) {
      check(scope, key);
      return read(scope, key);
    },
    async delete(scope, key) {
      check(scope, key);
      await call('DeleteItem', () => doc.send(new DeleteCommand({ TableName: tableName, Key: expectationKey(scope, key) })));
    },
    async pendingCreations(scope, now) {
      requireName('scope', scope);
      let total = 0;
      let start: Record<string, unknown> | undefined;
      do {
        const page = await call('Query', () =>
          doc.send(
            new QueryCommand({
              TableName: tableName,
              KeyConditionExpression: 'pk = :pk',
              FilterExpression: '#setAt >= :cut',
              ProjectionExpression: '#add',
              ExpressionAttributeNames: { '#add': 'add', '#setAt': 'setAt' },
              ExpressionAttributeValues: { ':pk': expectationKey(scope, '').pk, ':cut': now - EXPECTATIONS_TIMEOUT_MS },
              ConsistentRead: true,
              ExclusiveStartKey: start,
            }),
          ),
        );
        for (const item of page.Items ?? []) total += (item as { add: number }).add;
        start = page.LastEvaluatedKey;
      } while (start);
      return total;
    },
    async tryExpectCreations(scope, key, n, now, seen) {
      check(scope, key);
      requireCount('n', n);
      requireTime('now', now);
      if (seen) requireTime('seen.setAt', seen.setAt);
      // One conditional write: of N racing callers exactly one finds the record absent, expired
      // or satisfied; the rest fail the condition after the winner's write. With `seen`, the
      // record must also be the one the caller decided under.
      const takeable = '#setAt < :cut OR (#add <= :zero AND #del <= :zero)';
      const condition =
        seen === undefined ? `attribute_not_exists(pk) OR ${takeable}` : seen === null ? 'attribute_not_exists(pk) OR #setAt < :cut' : `attribute_not_exists(pk) OR (#setAt = :seen AND (${takeable}))`;
      return conditionalUpdate(doc, {
        TableName: tableName,
        Key: expectationKey(scope, key),
        UpdateExpression: 'SET #add = :n, #del = :zero, #setAt = :now, #ttl = :ttl',
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':n': n, ':zero': 0, ':now': now, ':cut': now - EXPECTATIONS_TIMEOUT_MS, ':ttl': expiry(now), ...(seen ? { ':seen': seen.setAt } : {}) },
      });
    },
  };
}

/** Attempts before giving up when restarts of an idle count keep racing each other. */
const MAX_FAILURE_ATTEMPTS = 8;

function dynamoFailures(doc: DynamoDBDocumentClient, tableName: string): FailureCounts {
  const names = { '#count': 'count', '#updatedAt': 'updatedAt', '#ttl': 'ttl' };
  const check = (scope: string, key: string): void => {
    requireName('scope', scope);
    requireName('key', key);
  };
  return {
    async increment(scope, key, now) {
      check(scope, key);
      requireTime('now', now);
      const cut = now - FAILURE_COUNT_TTL_MS;
      const ttl = ttlSeconds(now + FAILURE_COUNT_TTL_MS);
      for (let attempt = 0; attempt < MAX_FAILURE_ATTEMPTS; attempt++) {
        try {
          const out = await call('UpdateItem', () =>
            doc.send(
              new UpdateCommand({
                TableName: tableName,
                Key: failureKey(scope, key),
                UpdateExpression: 'SET #count = if_not_exists(#count, :zero) + :one, #updatedAt = :now, #ttl = :ttl',
                ConditionExpression: 'attribute_not_exists(pk) OR #updatedAt >= :cut',
                ExpressionAttributeNames: names,
                ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':now': now, ':cut': cut, ':ttl': ttl },
                ReturnValues: 'UPDATED_NEW',
              }),
            ),
          );
          return (out.Attributes as { count: number }).count;
        } catch (err) {
          if (!isConditionFailed(err)) throw err;
        }
        // The stored count is idle (its TTL passed, DynamoDB has not deleted it yet): restart at
        // 1, but only if it is still idle — a racer may have restarted it already.
        try {
          await call('PutItem', () =>
            doc.send(
              new PutCommand({
                TableName: tableName,
                Item: { ...failureKey(scope, key), count: 1, updatedAt: now, ttl },
                ConditionExpression: '#updatedAt < :cut',
                ExpressionAttributeNames: { '#updatedAt': 'updatedAt' },
                ExpressionAttributeValues: { ':cut': cut },
              }),
            ),
          );
          return 1;
        } catch (err) {
          if (!isConditionFailed(err)) throw err;
        }
      }
      throw new TransientError('StateStoreContention', `failure count ${scope} ${key}: no decision after ${MAX_FAILURE_ATTEMPTS} attempts`);
    },
    async get(scope, key, now) {
      check(scope, key);
      const out = await call('GetItem', () =>
        doc.send(new GetCommand({ TableName: tableName, Key: failureKey(scope, key), ConsistentRead: true })),
      );
      const item = out.Item as { count: number; updatedAt: number } | undefined;
      if (!item) return 0;
      if (now !== undefined && item.updatedAt < now - FAILURE_COUNT_TTL_MS) return 0;
      return item.count;
    },
    async reset(scope, key) {
      check(scope, key);
      await call('DeleteItem', () => doc.send(new DeleteCommand({ TableName: tableName, Key: failureKey(scope, key) })));
    },
  };
}
