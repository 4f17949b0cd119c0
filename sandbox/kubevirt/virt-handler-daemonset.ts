/**
 * The virt-handler DaemonSet as virt-operator deploys it in the `kubevirt` namespace, its pods
 * (one per node, label `kubevirt.io=virt-handler`), and the DaemonSet status counts the node
 * controller reads (reference node-drain-updates §1.2, orphan check).
 */
import type { KubeObject, Pod } from '../nodes/objects.ts';

export const KUBEVIRT_NAMESPACE = 'kubevirt';
export const VIRT_HANDLER = 'virt-handler';
/** `kubevirt.io=virt-handler`: what the node controller selects DaemonSets and pods by. */
export const VIRT_HANDLER_LABELS = { 'kubevirt.io': VIRT_HANDLER } as const;
export const VIRT_HANDLER_SELECTOR = 'kubevirt.io=virt-handler';

export interface DaemonSetCounts {
  desiredNumberScheduled: number;
  currentNumberScheduled: number;
  numberReady: number;
  numberAvailable: number;
  numberMisscheduled: number;
  updatedNumberScheduled: number;
}

/** The DaemonSet object (spec only; the status follows from the pods). */
export function virtHandlerDaemonSet(image: string): KubeObject & { spec: object } {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: VIRT_HANDLER, namespace: KUBEVIRT_NAMESPACE, labels: { ...VIRT_HANDLER_LABELS, 'app.kubernetes.io/component': 'kubevirt' } },
    spec: {
      selector: { matchLabels: { 'kubevirt.io': VIRT_HANDLER } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
      template: {
        metadata: { labels: { ...VIRT_HANDLER_LABELS, 'prometheus.kubevirt.io': 'true' } },
        spec: {
          serviceAccountName: 'kubevirt-handler',
          priorityClassName: 'kubevirt-cluster-critical',
          tolerations: [{ operator: 'Exists', effect: 'NoSchedule' }],
          containers: [{ name: VIRT_HANDLER, image, command: ['virt-handler'], resources: { requests: { cpu: '10m', memory: '357Mi' } } }],
        },
      },
    },
  };
}

/** The pod the DaemonSet controller would create on `nodeName` (bound directly, as DS pods are placed). */
export function virtHandlerPod(nodeName: string, image: string, owner: { uid: string }): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${VIRT_HANDLER}-${nodeName}`,
      namespace: KUBEVIRT_NAMESPACE,
      labels: { ...VIRT_HANDLER_LABELS, 'prometheus.kubevirt.io': 'true' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: VIRT_HANDLER, uid: owner.uid, controller: true }],
    },
    spec: {
      nodeName,
      serviceAccountName: 'kubevirt-handler',
      restartPolicy: 'Always',
      tolerations: [{ operator: 'Exists', effect: 'NoSchedule' }],
      containers: [{ name: VIRT_HANDLER, image, resources: { requests: { cpu: '10m', memory: '357Mi' } } }],
    } as Pod['spec'],
  };
}

/**
 * The status counts, as the DaemonSet controller reports them: desired = nodes that should run
 * one, current = those that do, ready = those whose pod is Running and Ready.
 */
export function daemonSetCounts(nodeNames: readonly string[], pods: readonly Pod[]): DaemonSetCounts {
  const nodes = new Set(nodeNames);
  const live = pods.filter((p) => !p.metadata?.deletionTimestamp && p.spec?.nodeName && nodes.has(p.spec.nodeName));
  const scheduledOn = new Set(live.map((p) => p.spec!.nodeName!));
  const ready = new Set(
    live
      .filter((p) => p.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
      .map((p) => p.spec!.nodeName!),
  );
  return {
    desiredNumberScheduled: nodes.size,
    currentNumberScheduled: scheduledOn.size,
    numberReady: ready.size,
    numberAvailable: ready.size,
    numberMisscheduled: 0,
    updatedNumberScheduled: scheduledOn.size,
  };
}
