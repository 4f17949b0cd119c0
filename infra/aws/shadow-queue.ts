/**
 * Shadow mode's channel (shared/cutover/shadow-channel.ts): `<prefix>-shadow.fifo`, where every
 * function sends its dry-run decisions and the relay receives them to judge against its watch.
 * Grouped by controller and key (each key's marks in order). Kept an hour: a decision older than
 * that can no longer be judged against what the live controller did around it. Made whatever the
 * mode, so switching to shadow is a context change of the functions and a value of the chart.
 */
import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export class ShadowQueue extends Construct {
  readonly queue: sqs.Queue;

  constructor(scope: Construct, id: string, props: { readonly prefix: string }) {
    super(scope, id);
    this.queue = new sqs.Queue(this, 'Queue', {
      queueName: `${props.prefix}-shadow.fifo`,
      fifo: true,
      contentBasedDeduplication: false,
      deduplicationScope: sqs.DeduplicationScope.MESSAGE_GROUP,
      fifoThroughputLimit: sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
      retentionPeriod: Duration.hours(1),
      visibilityTimeout: Duration.seconds(60),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
  }

  /** A function sends its decisions. */
  grantSend(grantee: iam.IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.queue.queueArn] }));
  }

  /** The relay receives and deletes them. */
  grantConsume(grantee: iam.IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'], resources: [this.queue.queueArn] }));
  }
}
