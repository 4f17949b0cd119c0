/** Lambda SQS event records built from real SQS receives (fauxqs), as the SQS trigger hands them over. */
import type { Message } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';

/** The Lambda record for a received message of queue `queueName`. */
export function sqsRecord(m: Message, queueName: string): SQSRecord {
  return {
    messageId: m.MessageId ?? '',
    receiptHandle: m.ReceiptHandle ?? '',
    body: m.Body ?? '',
    attributes: (m.Attributes ?? {}) as unknown as SQSRecord['attributes'],
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queueName}`,
    awsRegion: 'us-east-1',
  };
}
