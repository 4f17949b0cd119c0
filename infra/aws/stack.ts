/**
 * The whole AWS deployment of virt-reconciler: per controller a {@link ControllerQueue} and a
 * {@link ReconcileFunction}; the {@link StateTable}; the {@link TimerForwarder} for requeue-after;
 * the {@link SweepSchedules} of the controllers with a sweep; the dashboard; alarm actions; outputs the operator needs (role ARNs for EKS access, queue URLs
 * for the CLI). Settings come from context (settings.ts); code from the bundles (bundles.ts).
 */
import { Annotations, CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { CONTROLLERS } from '../../shared/queue/message.ts';
import { STATE_TABLE_ENV } from '../../shared/state/dynamodb-table.ts';
import type { LambdaBundle, ResolvedBundle } from './bundles.ts';
import { ControllerQueue } from './controller-queue.ts';
import { ReconcilerDashboard } from './dashboard.ts';
import { ReconcileFunction } from './reconcile-function.ts';
import { RelayIdentity } from './relay-identity.ts';
import { planConcurrency, visibilityTimeoutFor, type ReconcilerSettings } from './settings.ts';
import { StateTable } from './state-table.ts';
import { ShadowQueue } from './shadow-queue.ts';
import { SHADOW_QUEUE_ENV } from '../../shared/cutover/shadow-channel.ts';
import { SweepSchedules } from './sweep-schedules.ts';
import { TimerForwarder } from './timer-forwarder.ts';

export interface ReconcilerStackProps extends StackProps {
  readonly settings: ReconcilerSettings;
  readonly bundle: (name: LambdaBundle) => ResolvedBundle;
}

export class ReconcilerStack extends Stack {
  readonly queues: readonly ControllerQueue[];
  readonly functions: readonly ReconcileFunction[];
  readonly state: StateTable;
  readonly forwarder: TimerForwarder;
  readonly sweeps: SweepSchedules;

  constructor(scope: Construct, id: string, props: ReconcilerStackProps) {
    super(scope, id, props);
    const s = props.settings;
    const asset = (name: LambdaBundle): string => props.bundle(name).dir;
    const plan = planConcurrency(s.budget, s.batchSize, s.batchConcurrency);
    if (plan.overBudget) {
      Annotations.of(this).addWarningV2(
        'virt-reconciler:api-budget',
        `maxConcurrency floor (2 per function) × ${plan.inFlightPerInstance} in flight each (batchSize ${s.batchSize}, batchConcurrency ${s.batchConcurrency}) peaks at ${plan.peakQps.toFixed(0)} QPS, over the ${s.budget.apiQpsBudget} QPS budget; the FlowSchema (infra/kubernetes) is what holds the line.`,
      );
    }

    this.state = new StateTable(this, 'State', { tableName: `${s.prefix}-state` });
    const shadow = new ShadowQueue(this, 'Shadow', { prefix: s.prefix });
    const units = CONTROLLERS.map((controller) => {
      const queue = new ControllerQueue(this, `Queue-${controller}`, {
        prefix: s.prefix,
        controller,
        visibilityTimeoutSeconds: visibilityTimeoutFor(s.timeoutSeconds),
        maxReceiveCount: s.maxReceiveCount,
      });
      const fn = new ReconcileFunction(this, `Reconcile-${controller}`, { controller, assetDir: asset(controller), queue, state: this.state, settings: s, shadow });
      return { queue, fn };
    });
    this.queues = units.map((u) => u.queue);
    this.functions = units.map((u) => u.fn);
    this.forwarder = new TimerForwarder(this, 'TimerForwarder', { assetDir: asset('timer-forwarder'), queues: this.queues, settings: s });
    this.sweeps = new SweepSchedules(this, 'Sweeps', { prefix: s.prefix, queues: this.queues });
    const relay = new RelayIdentity(this, 'Relay', { queues: this.queues, ...(s.cluster !== undefined ? { clusterName: s.cluster.name } : {}) });
    // Shadow mode: the relay receives the functions' decisions and writes divergences to the table.
    shadow.grantConsume(relay.role);
    this.state.grantDivergenceWrites(relay.role);
    new ReconcilerDashboard(this, 'Dashboard', { dashboardName: `${s.prefix}`, units, forwarder: this.forwarder, sweeps: this.sweeps });

    if (s.alarmTopicArn !== undefined) {
      const topic = sns.Topic.fromTopicArn(this, 'AlarmTopic', s.alarmTopicArn);
      for (const alarm of this.queues.flatMap((q) => q.alarms)) alarm.addAlarmAction(new cwActions.SnsAction(topic));
    }

    new CfnOutput(this, 'RelayRoleArn', { value: relay.role.roleArn, description: 'EKS Pod Identity role of the relay ServiceAccount virt-reconciler/virt-reconciler-relay' });
    new CfnOutput(this, 'ShadowQueueUrl', { value: shadow.queue.queueUrl, description: `${SHADOW_QUEUE_ENV}: the chart's shadow.queueUrl (mode shadow)` });
    new CfnOutput(this, 'StateTableName', { value: this.state.table.tableName, description: `${STATE_TABLE_ENV} for the CLI` });
    for (const u of units) {
      const C = u.queue.controller.toUpperCase();
      new CfnOutput(this, `QueueUrl${C}`, { value: u.queue.queue.queueUrl, description: `QUEUE_URL_${C}` });
      new CfnOutput(this, `DlqUrl${C}`, { value: u.queue.dlq.queueUrl, description: `DLQ_URL_${C}` });
      new CfnOutput(this, `TimerQueueUrl${C}`, { value: u.queue.timers.queueUrl, description: `TIMER_QUEUE_URL_${C}` });
      new CfnOutput(this, `RoleArn${C}`, { value: u.fn.role.roleArn, description: `IAM role of the ${u.queue.controller} function: map it to group ${s.kubernetesGroup} (EKS access entry)` });
    }
  }
}
