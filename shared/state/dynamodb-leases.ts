/**
 * Leases on DynamoDB: one item per counter holding a map `holders` (holder → expiresAt ms).
 *
 * Acquire is one conditional UpdateItem — "set my entry, if I already hold a live entry or the
 * map has fewer than `limit` entries" — so the map can never grow past the limit whatever the
 * number of racing workers. `size(holders)` also counts expired entries, which is safe (it can
 * only refuse too early, never admit too many); when that refusal happens we read the item, remove
 * the expired entries with a condition that each still has the expiry we saw (so a holder that
 * refreshed meanwhile keeps its lease), and try again. See docs/state.md for the alternatives.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TransientError } from '../errors.ts';
import type { Leases } from './port.ts';
import { call, isConditionFailed, leaseKey, ttlSeconds } from './dynamodb-table.ts';
import { LEASE_COUNTER_GC_MS, requireCount, requireName, requireTime } from './validate.ts';

/** Each attempt either succeeds, sees the counter full, or lets another racer progress. */
const MAX_ATTEMPTS = 64;

type HolderMap = Record<string, number>;

/** The Leases port over the state table. */
export function dynamoLeases(doc: DynamoDBDocumentClient, tableName: string): Leases {
  const read = async (counter: string): Promise<HolderMap | undefined> => {
    const out = await call('GetItem', () => doc.send(new GetCommand({ TableName: tableName, Key: leaseKey(counter), ConsistentRead: true })));
    return out.Item?.holders as HolderMap | undefined;
  };

  // The item's own TTL only garbage-collects counters nobody used for a day (e.g. removed nodes).
  const itemTtl = (now: number, ttlMs: number): number => ttlSeconds(now + ttlMs + LEASE_COUNTER_GC_MS);

  const setEntry = async (counter: string, holder: string, limit: number, now: number, ttlMs: number): Promise<boolean> => {
    try {
      await call('UpdateItem', () =>
        doc.send(
          new UpdateCommand({
            TableName: tableName,
            Key: leaseKey(counter),
            UpdateExpression: 'SET #h.#me = :exp, #ttl = :ttl',
            ConditionExpression: 'attribute_exists(#h) AND (#h.#me > :now OR size(#h) < :limit)',
            ExpressionAttributeNames: { '#h': 'holders', '#me': holder, '#ttl': 'ttl' },
            ExpressionAttributeValues: { ':exp': now + ttlMs, ':now': now, ':limit': limit, ':ttl': itemTtl(now, ttlMs) },
          }),
        ),
      );
      return true;
    } catch (err) {
      if (isConditionFailed(err)) return false;
      throw err;
    }
  };

  const create = async (counter: string, holder: string, now: number, ttlMs: number): Promise<boolean> => {
    try {
      await call('PutItem', () =>
        doc.send(
          new PutCommand({
            TableName: tableName,
            Item: { ...leaseKey(counter), holders: { [holder]: now + ttlMs }, ttl: itemTtl(now, ttlMs) },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
      return true;
    } catch (err) {
      if (isConditionFailed(err)) return false;
      throw err;
    }
  };

  const removeExpired = async (counter: string, expired: readonly [string, number][]): Promise<void> => {
    const names: Record<string, string> = { '#h': 'holders' };
    const values: Record<string, number> = {};
    const removes: string[] = [];
    const conditions: string[] = [];
    expired.forEach(([holder, exp], i) => {
      names[`#e${i}`] = holder;
      values[`:v${i}`] = exp;
      removes.push(`#h.#e${i}`);
      conditions.push(`#h.#e${i} = :v${i}`);
    });
    try {
      await call('UpdateItem', () =>
        doc.send(
          new UpdateCommand({
            TableName: tableName,
            Key: leaseKey(counter),
            UpdateExpression: `REMOVE ${removes.join(', ')}`,
            ConditionExpression: conditions.join(' AND '),
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          }),
        ),
      );
    } catch (err) {
      // Someone else pruned or refreshed first: the caller re-reads and decides again.
      if (!isConditionFailed(err)) throw err;
    }
  };

  return {
    async acquire(counter, holder, limit, now, ttlMs) {
      requireName('counter', counter);
      requireName('holder', holder);
      requireCount('limit', limit);
      requireTime('now', now);
      requireTime('ttlMs', ttlMs);
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        if (await setEntry(counter, holder, limit, now, ttlMs)) return true;
        const holders = await read(counter);
        if (holders === undefined) {
          if (limit === 0) return false;
          if (await create(counter, holder, now, ttlMs)) return true;
          continue;
        }
        const entries = Object.entries(holders);
        const expired = entries.filter(([, exp]) => exp <= now);
        if (expired.length > 0) {
          await removeExpired(counter, expired);
          continue;
        }
        // Full of live holders: a refusal. Otherwise a release or a refresh raced us: retry.
        if (entries.length >= limit && !(holder in holders)) return false;
      }
      throw new TransientError('LeaseContention', `lease ${counter}: no decision after ${MAX_ATTEMPTS} attempts`);
    },
    async release(counter, holder) {
      requireName('counter', counter);
      requireName('holder', holder);
      try {
        await call('UpdateItem', () =>
          doc.send(
            new UpdateCommand({
              TableName: tableName,
              Key: leaseKey(counter),
              UpdateExpression: 'REMOVE #h.#me',
              // Without the condition, UpdateItem would create an empty item for an unknown counter.
              ConditionExpression: 'attribute_exists(#h)',
              ExpressionAttributeNames: { '#h': 'holders', '#me': holder },
            }),
          ),
        );
      } catch (err) {
        if (!isConditionFailed(err)) throw err;
      }
    },
    async holders(counter, now) {
      requireName('counter', counter);
      const holders = (await read(counter)) ?? {};
      return Object.entries(holders)
        .filter(([, exp]) => exp > now)
        .map(([h]) => h)
        .sort();
    },
  };
}
