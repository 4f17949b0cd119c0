/**
 * The relay's AWS identity: an IAM role for EKS Pod Identity (no access keys in the cluster) that
 * may only send to the FIFO key queues (and, for shadow mode, receive from the shadow queue and
 * write divergences to the state table: stack.ts); with a cluster in context, the association to the
 * relay's ServiceAccount (infra/kubernetes/relay-rbac.yaml).
 */
import * as eks from 'aws-cdk-lib/aws-eks';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import type { ControllerQueue } from './controller-queue.ts';

export const RELAY_NAMESPACE = 'virt-reconciler';
export const RELAY_SERVICE_ACCOUNT = 'virt-reconciler-relay';

export class RelayIdentity extends Construct {
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: { readonly queues: readonly ControllerQueue[]; readonly clusterName?: string }) {
    super(scope, id);
    this.role = new iam.Role(this, 'Role', {
      // EKS Pod Identity's service principal needs both actions.
      assumedBy: new iam.ServicePrincipal('pods.eks.amazonaws.com').withSessionTags(),
      description: 'virt-reconciler relay: send keys to the controllers\' FIFO queues',
    });
    this.role.addToPolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: props.queues.map((q) => q.queue.queueArn) }));
    if (props.clusterName !== undefined) {
      new eks.CfnPodIdentityAssociation(this, 'PodIdentity', {
        clusterName: props.clusterName,
        namespace: RELAY_NAMESPACE,
        serviceAccount: RELAY_SERVICE_ACCOUNT,
        roleArn: this.role.roleArn,
      });
    }
  }
}
