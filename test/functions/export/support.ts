/**
 * Test support for the export reconcile against the sandbox API server: a client as identity
 * `export-controller` (the audit log tells its calls from the test's own), a controllable clock,
 * the CA virt-operator publishes, and manifests for exports and their sources.
 */
import type { ApiServer } from '../../../sandbox/apiserver/index.ts';
import { auditActions, auditEvents } from '../../support/audit-actions.ts';
import { makeCa, type CertificateAuthority } from '../../../sandbox/storage/operator-cas.ts';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { VirtualMachineExport } from '../../../shared/api/export.ts';
import { CONFIG_MAPS, SECRETS } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import type { ExportDeps } from '../../../functions/export/deps.ts';

export const CONTROLLER = 'export-controller';
export const NS = 'default';

export interface Harness {
  deps: ExportDeps;
  /** The test's own client (identity `test`): set-up, and playing kubelet and the other agents. */
  readonly kube: KubeClient;
  advance(ms: number): void;
  nowMs(): number;
}

export function harness(server: ApiServer, start = Date.now()): Harness {
  let now = start;
  const deps: ExportDeps = {
    kube: createKubeClient(server.kubeConfig(CONTROLLER)),
    now: () => now,
    log: { info: () => undefined, warn: () => undefined },
  };
  return { deps, kube: createKubeClient(server.kubeConfig('test')), advance: (ms) => (now += ms), nowMs: () => now };
}

/** Publishes `kubevirt-export-ca` (Secret and ca-bundle ConfigMap) in `kubevirt`, as virt-operator does. */
export async function publishExportCa(kube: KubeClient): Promise<CertificateAuthority> {
  const ca = await makeCa('kubevirt-export-ca@test');
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  await kube.create(SECRETS, { metadata: { name: 'kubevirt-export-ca', namespace: 'kubevirt' }, type: 'kubernetes.io/tls', data: { 'tls.crt': b64(ca.certPem), 'tls.key': b64(ca.keyPem) } });
  await kube.create(CONFIG_MAPS, { metadata: { name: 'kubevirt-export-ca', namespace: 'kubevirt' }, data: { 'ca-bundle': `${ca.certPem}\n` } });
  return ca;
}

/** `verb resource[/sub] name` for every write the controller made; events as `event Reason`. */
export const actions = (server: ApiServer): string[] => auditActions(server, CONTROLLER);

/** The controller's events, `Type Reason: message`. */
export const events = (server: ApiServer): string[] => auditEvents(server, CONTROLLER);

export function exportManifest(name: string, source: VirtualMachineExport['spec']['source'], spec: Partial<VirtualMachineExport['spec']> = {}): VirtualMachineExport {
  return { apiVersion: 'export.kubevirt.io/v1', kind: 'VirtualMachineExport', metadata: { name, namespace: NS }, spec: { source, ...spec } };
}

export const pvcSourceRef = (name: string) => ({ apiGroup: '', kind: 'PersistentVolumeClaim', name });
export const vmSourceRef = (name: string) => ({ apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name });
export const snapshotSourceRef = (name: string) => ({ apiGroup: 'snapshot.kubevirt.io', kind: 'VirtualMachineSnapshot', name });

export function pvcManifest(name: string, extra: { annotations?: Record<string, string>; volumeMode?: string } = {}): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: NS, ...(extra.annotations ? { annotations: extra.annotations } : {}) },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'sandbox-csi', ...(extra.volumeMode ? { volumeMode: extra.volumeMode } : {}) },
  };
}
