/**
 * The queue and table of a chaos run, on either backend:
 * - `sqlite` (default): the local runtime's embedded SQLite queue and table, on disk;
 * - `aws`: SQS FIFO queues in fauxqs and the state table in DynamoDB Local, through the real AWS
 *   SDK clients and our SQS/DynamoDB adapters, with faults injected as SDK middleware
 *   (aws-faults.ts: throttling, 5xx, timeouts, lost lease extensions), and the timer forwarder
 *   pumped as its Lambda would be.
 * Both with short leases, so an abandoned key comes back quickly, and retries capped at 4 s.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SqliteKeyQueue } from '../../shared/queue/sqlite-queue.ts';
import { SqsKeyQueue } from '../../shared/queue/sqs-queue.ts';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Controller } from '../../shared/queue/message.ts';
import type { KeyQueue, RetryPolicy } from '../../shared/queue/port.ts';
import { ensureTable, openDynamoDbState } from '../../shared/state/dynamodb-state.ts';
import type { StateStore } from '../../shared/state/port.ts';
import { openSqliteState } from '../../shared/state/sqlite-state.ts';
import { startDynamoDbLocal } from '../support/dynamodb-local.ts';
import { startLocalSqs } from '../queue/fauxqs.ts';
import { AwsFaults } from './aws-faults.ts';
import { slowQueue } from './injectors.ts';

/** Which queue and table a chaos run uses. */
export type ChaosBackend = 'sqlite' | 'aws';

/** The chaos queue's visibility timeout on SQLite: a killed worker's key comes back this soon. */
export const CHAOS_VISIBILITY_MS = 1500;
/** On SQS, whose visibility counts whole seconds. */
const SQS_VISIBILITY_SECONDS = 2;
/**
 * Production's attempts (16) with a shorter ceiling, so a failing key retries within seconds, and
 * a dead-letter window of ten minutes, longer than any chaos run: chaos alone (every pass of a
 * key failing for a while) must never dead-letter a healthy key — only the poison, whose
 * permanent error dead-letters at once. Production's hour would not fit SQS's 1000 receives at a
 * 4 s ceiling (SqsKeyQueue refuses such a policy).
 */
const RETRY: RetryPolicy = { baseDelayMs: 5, maxDelayMs: 4000, maxAttempts: 16, deadLetterAfterMs: 600_000 };

/** A queue that also takes raw bodies (how a malformed message can arrive); both backends have it. */
export type ChaosQueue = KeyQueue & { sendRaw(controller: Controller, body: string): Promise<void> };

export interface ChaosStore {
  readonly backend: ChaosBackend;
  readonly queue: ChaosQueue;
  readonly state: StateStore;
  /** The queue, every operation 0–20 ms slower. */
  readonly slow: KeyQueue;
  /** The lease (visibility timeout) in ms. */
  readonly leaseMs: number;
  /** The SDK faults (aws only): arm/disarm, bursts, counts. */
  readonly aws?: AwsFaults;
  /** The SQS client (faults attached) and the queues' name prefix (aws only), for Lambda-shaped consumers. */
  readonly sqs?: { readonly client: SQSClient; readonly prefix: string };
  /** What the backend injected (empty on SQLite). */
  injected(): Record<string, number>;
  close(): Promise<void>;
}

export interface ChaosStoreOptions {
  readonly backend?: ChaosBackend;
  /** Probability per AWS request of a fault (aws only). Default 0.03. */
  readonly awsFaultRate?: number;
  /** Probability that an SQS lease extension is lost (aws only). Default 0.05. */
  readonly heartbeatLoss?: number;
}

/** The chaos backend named by CHAOS_BACKEND (sqlite unless it says aws). */
export function backendFromEnv(env: NodeJS.ProcessEnv = process.env): ChaosBackend {
  const v = env.CHAOS_BACKEND?.trim();
  if (!v || v === 'sqlite') return 'sqlite';
  if (v === 'aws') return 'aws';
  throw new Error(`CHAOS_BACKEND must be "sqlite" or "aws", not ${JSON.stringify(v)}`);
}

export async function openChaosStore(random: () => number, opts: ChaosStoreOptions = {}): Promise<ChaosStore> {
  return (opts.backend ?? 'sqlite') === 'aws' ? openAwsStore(random, opts) : openSqliteStore(random);
}

function openSqliteStore(random: () => number): ChaosStore {
  const dir = mkdtempSync(join(tmpdir(), 'chaos-'));
  const db = new DatabaseSync(join(dir, 'chaos.db'));
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
  const queue = new SqliteKeyQueue({ db, visibilityTimeoutMs: CHAOS_VISIBILITY_MS, retry: RETRY });
  const state = openSqliteState({ db });
  return {
    backend: 'sqlite',
    queue,
    state,
    slow: slowQueue(queue, random, 20),
    leaseMs: CHAOS_VISIBILITY_MS,
    injected: () => ({}),
    async close() {
      await queue.close();
      await state.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function openAwsStore(random: () => number, opts: ChaosStoreOptions): Promise<ChaosStore> {
  const [sqs, dynamo] = await Promise.all([startLocalSqs(), startDynamoDbLocal()]);
  try {
    const faults = new AwsFaults(random, opts.awsFaultRate ?? 0.03, opts.heartbeatLoss ?? 0.05);
    const sqsClient = sqs.client();
    const dynamoClient = dynamo.client();
    const tableName = `chaos-${randomUUID().slice(0, 8)}`;
    // The table and the queues are made before the faults are attached: set-up is not under test.
    await ensureTable(dynamoClient, tableName);
    const prefix = `chaos-${randomUUID().slice(0, 8)}`;
    const queue = new SqsKeyQueue({ client: sqsClient, prefix, retry: RETRY, visibilityTimeoutSeconds: SQS_VISIBILITY_SECONDS });
    await queue.ensureQueues();
    faults.attach(sqsClient, 'sqs');
    faults.attach(dynamoClient, 'dynamodb');
    const state = openDynamoDbState({ tableName, client: dynamoClient });
    // The timer forwarder, as its Lambda runs on AWS (shared/queue/timer-forwarder.ts): without it
    // a key requeued for later (an expectation to wait out, a periodic check) would stay on the
    // timer queue and never come back.
    const timers = { forwarded: 0, failures: 0 };
    let pumping = true;
    const pump = (async () => {
      while (pumping) {
        try {
          timers.forwarded += await queue.pumpTimers();
        } catch {
          timers.failures++; // under the SDK faults; the failed timers come back
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    return {
      backend: 'aws',
      queue,
      state,
      slow: slowQueue(queue, random, 20),
      leaseMs: SQS_VISIBILITY_SECONDS * 1000,
      aws: faults,
      sqs: { client: sqsClient, prefix },
      injected: () => ({ ...faults.counts, timersForwarded: timers.forwarded, timerPumpFailures: timers.failures }),
      async close() {
        faults.armed = false;
        pumping = false;
        await pump;
        await state.close();
        dynamoClient.destroy();
        await sqs.stop();
        await dynamo.stop();
      },
    };
  } catch (err) {
    await sqs.stop();
    await dynamo.stop();
    throw err;
  }
}
