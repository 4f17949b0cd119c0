/**
 * The conformance suite against the DynamoDB StateStore on DynamoDB Local (one emulator for this
 * file, two SDK clients = two connection pools). When Java or the emulator is missing, the
 * before() hook fails with the install command: these tests fail, they never skip.
 */
import assert from 'node:assert/strict';
import { DescribeTimeToLiveCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { after, before, describe, test } from 'node:test';
import { InvalidInputError } from '../../shared/errors.ts';
import { ensureTable, openDynamoDbState, STATE_TABLE_ENV } from '../../shared/state/dynamodb-state.ts';
import { EXPECTATIONS_TIMEOUT_MS } from '../../shared/state/port.ts';
import { GC_GRACE_MS } from '../../shared/state/validate.ts';
import { startDynamoDbLocal, type DynamoDbLocal } from '../support/dynamodb-local.ts';
import { registerStateConformance } from './conformance.ts';

const TABLE = 'virt-reconciler-state';
let ddb: DynamoDbLocal | undefined;
let started: Promise<DynamoDbLocal> | undefined;

/** One emulator for the whole file, started by whichever suite asks first. */
function emulator(): Promise<DynamoDbLocal> {
  started ??= startDynamoDbLocal().then(async (d) => {
    ddb = d;
    const client = d.client();
    await ensureTable(client, TABLE);
    client.destroy();
    return d;
  });
  return started;
}

after(async () => {
  await ddb?.stop();
});

// A test of its own, not only a hook: a failing before() merely "cancels" the suites' tests,
// and a missing emulator must show up in the closing `fail N` line that CI reads.
test('DynamoDB Local is installed and answers (else: npx node scripts/dynamodb-local.ts install)', async () => {
  await emulator();
});

registerStateConformance('dynamodb (DynamoDB Local), two clients', async () => {
  const d = await emulator();
  return {
    open: async () => openDynamoDbState({ tableName: TABLE, client: d.client() }),
    close: async () => {},
  };
});

describe('dynamodb state: beyond the conformance suite', () => {
  let client: DynamoDBClient | undefined;
  before(async () => {
    client = (await emulator()).client();
  });
  after(() => client?.destroy());

  test('ensureTable is idempotent and enables TTL on `ttl`', async () => {
    // arrange
    const c = client as DynamoDBClient;
    // act
    await ensureTable(c, TABLE);
    const ttl = await c.send(new DescribeTimeToLiveCommand({ TableName: TABLE }));
    // assert
    assert.equal(ttl.TimeToLiveDescription?.AttributeName, 'ttl');
    assert.equal(ttl.TimeToLiveDescription?.TimeToLiveStatus, 'ENABLED');
  });

  test('an expectation item carries ttl = epoch seconds of its expiry plus the GC grace', async () => {
    // arrange
    const store = openDynamoDbState({ tableName: TABLE, client: client as DynamoDBClient });
    const now = Math.floor(Date.now() / 1000) * 1000;
    // act
    await store.expectations.expectCreations('ttl-check', 'ns/vmi', 1, now);
    const raw = await DynamoDBDocumentClient.from(client as DynamoDBClient).send(
      new GetCommand({ TableName: TABLE, Key: { pk: 'exp#ttl-check', sk: 'ns/vmi' }, ConsistentRead: true }),
    );
    // assert
    assert.equal(raw.Item?.ttl, (now + EXPECTATIONS_TIMEOUT_MS + GC_GRACE_MS) / 1000);
    await store.close();
  });

  test(`without a table name or ${STATE_TABLE_ENV}, opening fails with InvalidInputError`, () => {
    // arrange
    const saved = process.env[STATE_TABLE_ENV];
    delete process.env[STATE_TABLE_ENV];
    try {
      // act + assert
      assert.throws(() => openDynamoDbState({ client: client as DynamoDBClient }), InvalidInputError);
    } finally {
      if (saved !== undefined) process.env[STATE_TABLE_ENV] = saved;
    }
  });

  test('an unreachable endpoint surfaces as a TransientError (retry with backoff), not a raw SDK error', async () => {
    // arrange
    const { DynamoDBClient: Client } = await import('@aws-sdk/client-dynamodb');
    const dead = new Client({ endpoint: 'http://127.0.0.1:9', region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, maxAttempts: 1 });
    const store = openDynamoDbState({ tableName: TABLE, client: dead });
    // act + assert
    await assert.rejects(store.expectations.satisfied('s', 'ns/vmi', Date.now()), (err: unknown) => {
      assert.equal((err as { name?: string }).name, 'TransientError');
      assert.equal((err as { reason?: string }).reason, 'StateStoreError');
      return true;
    });
    dead.destroy();
  });
});
