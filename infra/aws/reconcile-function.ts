/**
 * One controller's reconcile function as one operational unit: the Lambda from `dist/<controller>`,
 * its SQS FIFO trigger (partial batch responses, max concurrency from the apiserver budget), the
 * least-privilege grants (consume its own queue; send to its own timer queue and DLQ, and to its
 * own queue when it has a sweep; the table's
 * item operations), the EKS access entry that maps its role to the functions' Kubernetes group,
 * and its dashboard widgets.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sources from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import { controllerInfo } from '../../shared/controllers.ts';
import { EKS_ENV } from '../../shared/kube/eks-token.ts';
import { KUBEVIRT_IDENTITY_ENV } from '../../shared/kube/kubevirt-identity.ts';
import { BATCH_CONCURRENCY_ENV } from '../../shared/queue/batch-concurrency.ts';
import type { Controller } from '../../shared/queue/message.ts';
import { STATE_TABLE_ENV } from '../../shared/state/dynamodb-table.ts';
import { BundledFunction } from './bundled-function.ts';
import type { ControllerQueue } from './controller-queue.ts';
import { CONTROLLER_GAUGES, DIMENSION, METRIC, RESULTS } from './metric-names.ts';
import type { ReconcilerSettings } from './settings.ts';
import type { StateTable } from './state-table.ts';
import type { ShadowQueue } from './shadow-queue.ts';
import { SHADOW_QUEUE_ENV } from '../../shared/cutover/shadow-channel.ts';

export interface ReconcileFunctionProps {
  readonly controller: Controller;
  readonly assetDir: string;
  readonly queue: ControllerQueue;
  readonly state: StateTable;
  readonly settings: ReconcilerSettings;
  /** Where the function sends its decisions in shadow mode (the relay judges them). */
  readonly shadow: ShadowQueue;
}

const PERIOD = Duration.minutes(1);

export class ReconcileFunction extends Construct {
  readonly controller: Controller;
  readonly fn: lambda.Function;
  readonly role: iam.Role;
  readonly source: sources.SqsEventSource;
  private readonly namespace: string;
  private readonly maxConcurrency: number;

  constructor(scope: Construct, id: string, props: ReconcileFunctionProps) {
    super(scope, id);
    const { controller, queue, settings } = props;
    this.controller = controller;
    this.namespace = settings.metricsNamespace;
    this.maxConcurrency = settings.maxConcurrency[controller];
    const C = controller.toUpperCase();
    const bundled = new BundledFunction(this, 'Bundled', {
      assetDir: props.assetDir,
      functionName: `${settings.prefix}-${controller}`,
      description: `virt-reconciler: KubeVirt's ${controller} controller`,
      memoryMb: settings.memoryMb,
      timeoutSeconds: settings.timeoutSeconds,
      logRetentionDays: settings.logRetentionDays,
      ...(settings.vpc !== undefined ? { vpc: settings.vpc } : {}),
      environment: {
        CONTROLLER: controller,
        QUEUE_PREFIX: settings.prefix,
        // Names read by shared/queue/sqs-queue.ts queueUrlsFromEnv (docs/queue.md).
        [`QUEUE_URL_${C}`]: queue.queue.queueUrl,
        [`DLQ_URL_${C}`]: queue.dlq.queueUrl,
        [`TIMER_QUEUE_URL_${C}`]: queue.timers.queueUrl,
        [STATE_TABLE_ENV]: props.state.table.tableName,
        ...(settings.cluster !== undefined
          ? { [EKS_ENV.clusterName]: settings.cluster.name, [EKS_ENV.endpoint]: settings.cluster.endpoint, [EKS_ENV.caData]: settings.cluster.caData }
          : {}),
        // KubeVirt's namespace: the VMI writes and migration creates act as its kubevirt-controller
        // (shared/kube/kubevirt-identity.ts), and virt-controller's Lease is there (the cutover's fence).
        [KUBEVIRT_IDENTITY_ENV.namespace]: settings.kubevirtNamespace,
        // Keys of a batch reconciled at once (shared/runtime/reconcile-batch.ts; the plan's in-flight count).
        [BATCH_CONCURRENCY_ENV]: String(settings.batchConcurrency),
        // The cutover's fence and shadow mode (shared/cutover/env.ts, docs/cutover.md).
        VR_MODE: settings.mode,
        VR_LEASE_IDENTITY: settings.leaseIdentity,
        [SHADOW_QUEUE_ENV]: props.shadow.queue.queueUrl,
        POWERTOOLS_SERVICE_NAME: `virt-reconciler-${controller}`,
        POWERTOOLS_METRICS_NAMESPACE: settings.metricsNamespace,
        POWERTOOLS_LOG_LEVEL: 'INFO',
      },
    });
    this.fn = bundled.fn;
    this.role = bundled.role;

    // The trigger grants exactly the consume actions on this queue (Receive, Delete,
    // ChangeMessageVisibility — our retry backoff —, GetQueueAttributes, GetQueueUrl).
    this.source = new sources.SqsEventSource(queue.queue, {
      batchSize: settings.batchSize,
      reportBatchItemFailures: true,
      maxConcurrency: this.maxConcurrency,
    });
    this.fn.addEventSource(this.source);
    // requeue-after → its timer queue; dead letters (with a reason) → its DLQ; a swept controller
    // also sends the keys its sweep lists to its own queue (shared/reconcile/sweep.ts). Nothing else.
    const own = controllerInfo(controller).sweep ? [queue.queue.queueArn] : [];
    this.role.addToPolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [queue.timers.queueArn, queue.dlq.queueArn, ...own] }));
    props.state.grantStateAccess(this.role);
    props.shadow.grantSend(this.role);

    if (settings.cluster !== undefined && settings.createAccessEntries) {
      // EKS access entry: the apiserver maps this role to the user virt-reconciler:<controller>,
      // which infra/kubernetes/<controller>-controller-rbac.yaml binds, in the functions' group,
      // which the FlowSchema rate-limits.
      new eks.CfnAccessEntry(this, 'AccessEntry', {
        clusterName: settings.cluster.name,
        principalArn: this.role.roleArn,
        type: 'STANDARD',
        username: `virt-reconciler:${controller}`,
        kubernetesGroups: [settings.kubernetesGroup],
      });
    }
  }

  private emf(name: string, statistic: string, extra: Record<string, string> = {}, label?: string): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: this.namespace,
      metricName: name,
      dimensionsMap: { [DIMENSION.controller]: this.controller, ...extra },
      statistic,
      period: PERIOD,
      ...(label !== undefined ? { label } : {}),
    });
  }

  /** Invocations/errors/throttles, duration, concurrency, and our reconcile metrics. */
  widgets(): cloudwatch.IWidget[] {
    const c = this.controller;
    const sum = { period: PERIOD, statistic: 'Sum' };
    return [
      new cloudwatch.GraphWidget({
        title: `${c}: invocations / errors / throttles`,
        left: [this.fn.metricInvocations(sum), this.fn.metricErrors(sum), this.fn.metricThrottles(sum)],
        width: 6,
      }),
      new cloudwatch.GraphWidget({
        title: `${c}: duration (ms)`,
        left: ['p50', 'p99', 'Maximum'].map((s) => this.fn.metricDuration({ period: PERIOD, statistic: s, label: s })),
        width: 6,
      }),
      new cloudwatch.GraphWidget({
        title: `${c}: concurrent executions`,
        left: [this.fn.metric('ConcurrentExecutions', { period: PERIOD, statistic: 'Maximum' })],
        leftAnnotations: [{ value: this.maxConcurrency, label: 'maxConcurrency (event source)' }],
        width: 6,
      }),
      new cloudwatch.GraphWidget({
        title: `${c}: ${METRIC.reconcileTotal} by result`,
        left: RESULTS.map((r) => this.emf(METRIC.reconcileTotal, 'Sum', { [DIMENSION.result]: r }, r)),
        stacked: true,
        width: 6,
      }),
      new cloudwatch.GraphWidget({
        title: `${c}: ${METRIC.reconcileTime} / ${METRIC.apiCallsPerReconcile}`,
        left: ['p50', 'p99'].map((s) => this.emf(METRIC.reconcileTime, s, {}, `${METRIC.reconcileTime} ${s}`)),
        right: ['Average', 'Maximum'].map((s) => this.emf(METRIC.apiCallsPerReconcile, s, {}, `${METRIC.apiCallsPerReconcile} ${s}`)),
        width: 12,
      }),
      // KubeVirt's gauges (no dimensions: the value is the cluster's, whichever invocation set it).
      ...(CONTROLLER_GAUGES[c] ?? []).map(
        (name) =>
          new cloudwatch.GraphWidget({
            title: `${c}: ${name}`,
            left: [new cloudwatch.Metric({ namespace: this.namespace, metricName: name, statistic: 'Maximum', period: PERIOD, label: name })],
            width: 6,
          }),
      ),
    ];
  }
}
