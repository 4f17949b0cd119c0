/**
 * The key-value table behind the AWS StateStore (shared/state/dynamodb-table.ts, docs/state.md):
 * `pk`/`sk` strings, on demand, TTL on `ttl` (epoch seconds; our code still filters expired
 * items itself because DynamoDB deletes lazily), point-in-time recovery, retained on stack
 * deletion (expectations and leases are the only guard against duplicate pods mid-flight).
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { DIVERGENCE_PK } from '../../shared/cutover/divergence-store.ts';

/** The item operations shared/state/dynamodb-*.ts issue (Get/Put/Update/Delete/Query), nothing else. */
export const STATE_ACTIONS = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:Query'] as const;

export class StateTable extends Construct {
  readonly table: dynamodb.Table;

  constructor(scope: Construct, id: string, props: { readonly tableName: string }) {
    super(scope, id);
    this.table = new dynamodb.Table(this, 'Table', {
      tableName: props.tableName,
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: 'ttl',
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  /** Lets `grantee` run exactly {@link STATE_ACTIONS} on this table (no index, no scan, no batch). */
  grantStateAccess(grantee: iam.IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(new iam.PolicyStatement({ actions: [...STATE_ACTIONS], resources: [this.table.tableArn] }));
  }

  /** The relay in shadow mode: it writes divergences (one UpdateItem each, shared/cutover/divergence-store.ts) and nothing else. */
  grantDivergenceWrites(grantee: iam.IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:UpdateItem'],
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [DIVERGENCE_PK] } },
      }),
    );
  }
}
