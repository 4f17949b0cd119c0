/**
 * Pure part of the SQS side: turning received SQS messages (from ReceiveMessage or a Lambda
 * event) into {@link ReceivedKey}s, and the opaque receipt that carries what settling needs.
 *
 * Coalescing on SQS happens here: the messages of one group (= one key) that arrive in the same
 * receive become one ReceivedKey with several receipt handles behind it (newest cause wins, with
 * the freshest view: shared/queue/coalesce.ts).
 */
import { ReconcilerError } from '../errors.ts';
import { coalesceMessages } from './coalesce.ts';
import { parseKeyMessage, type KeyMessage } from './message.ts';
import type { ReceivedKey } from './port.ts';

/** One received SQS message, normalized from the SDK's `Message` or Lambda's `SQSRecord`. */
export interface SqsReceived {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  readonly groupId: string;
  readonly receiveCount: number;
  /** Epoch ms. */
  readonly sentTimestamp: number;
  /** Epoch ms of the first receive (≈ the first attempt). */
  readonly firstReceiveTimestamp: number;
}

/** What an SQS receipt encodes: everything ack / retry / dead-letter need, no lookup. */
export interface SqsReceipt {
  /** Receipt handles of every message behind this delivery. */
  readonly h: readonly string[];
  /** The body to dead-letter or requeue (the newest, or the raw malformed one). */
  readonly b: string;
  /** Attempt number (the highest ApproximateReceiveCount among the messages). */
  readonly a: number;
  /** Oldest SentTimestamp. */
  readonly t: number;
  /** First receive (≈ first failure's attempt start). */
  readonly f: number;
}

export function encodeReceipt(r: SqsReceipt): string {
  return Buffer.from(JSON.stringify(r)).toString('base64url');
}

export function decodeReceipt(receipt: string): SqsReceipt {
  try {
    const r = JSON.parse(Buffer.from(receipt, 'base64url').toString('utf8')) as SqsReceipt;
    if (Array.isArray(r.h) && typeof r.b === 'string' && typeof r.a === 'number') return r;
  } catch {
    // fall through
  }
  throw new ReconcilerError('InvalidReceipt', 'not a receipt of the SQS key queue');
}

/** A key's delivery plus the SQS message ids behind it (Lambda reports failures by message id). */
export interface KeyGroup {
  readonly received: ReceivedKey;
  readonly messageIds: readonly string[];
}

/** A message whose body is not a valid key message: dead-letter it with `why`. */
export interface MalformedReceived {
  readonly receipt: string;
  readonly messageId: string;
  readonly why: string;
}

/**
 * Groups received messages by message group (the key), in order of first appearance. Within a
 * group SQS FIFO hands messages out in order, so the last valid one is the newest cause.
 */
export function groupReceived(messages: readonly SqsReceived[]): { keys: KeyGroup[]; malformed: MalformedReceived[] } {
  const groups = new Map<string, { msgs: SqsReceived[]; newest: KeyMessage }>();
  const malformed: MalformedReceived[] = [];
  for (const m of messages) {
    let parsed: KeyMessage;
    try {
      parsed = parseKeyMessage(m.body);
    } catch (err) {
      malformed.push({ receipt: encodeReceipt(receiptOf([m], m.body)), messageId: m.messageId, why: (err as Error).message });
      continue;
    }
    const g = groups.get(m.groupId);
    if (g === undefined) groups.set(m.groupId, { msgs: [m], newest: parsed });
    else {
      g.msgs.push(m);
      g.newest = coalesceMessages(g.newest, parsed);
    }
  }
  const keys = [...groups.values()].map(({ msgs, newest }): KeyGroup => {
    const r = receiptOf(msgs, JSON.stringify(newest));
    return {
      received: { message: newest, receipt: encodeReceipt(r), attempt: r.a, ...(r.a > 1 ? { firstFailureAt: r.f } : {}), enqueuedAt: r.t, coalesced: msgs.length },
      messageIds: msgs.map((m) => m.messageId),
    };
  });
  return { keys, malformed };
}

function receiptOf(msgs: readonly SqsReceived[], body: string): SqsReceipt {
  return {
    h: msgs.map((m) => m.receiptHandle),
    b: body,
    a: Math.max(1, ...msgs.map((m) => m.receiveCount)),
    t: Math.min(...msgs.map((m) => m.sentTimestamp)),
    f: Math.min(...msgs.map((m) => m.firstReceiveTimestamp)),
  };
}

/** Normalizes system attributes, which both the SDK and Lambda give as strings. */
export function toSqsReceived(m: {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: Partial<Record<string, string>>;
}): SqsReceived {
  const num = (name: string, fallback: number): number => {
    const v = Number(m.attributes[name]);
    return Number.isFinite(v) && m.attributes[name] !== undefined ? v : fallback;
  };
  const sent = num('SentTimestamp', 0);
  return {
    messageId: m.messageId,
    receiptHandle: m.receiptHandle,
    body: m.body,
    groupId: m.attributes.MessageGroupId ?? m.messageId,
    receiveCount: num('ApproximateReceiveCount', 1),
    sentTimestamp: sent,
    firstReceiveTimestamp: num('ApproximateFirstReceiveTimestamp', sent),
  };
}
