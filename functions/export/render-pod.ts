/**
 * The exporter pod `virt-export-<name>` (reference §3.3 step 3): one `exporter` container serving
 * the source's claims on :8443 until its `DEADLINE` (the earlier of the serving certificate's
 * renewal and the export's TTL), the cert and token Secrets mounted, and the paths the export
 * server serves in its environment. Also the certificate parameters it is created with (from the
 * KubeVirt CR), which the pod's annotation remembers so a change replaces the pod.
 */
import type { V1EnvVar, V1Pod, V1Volume, V1VolumeDevice, V1VolumeMount } from '@kubernetes/client-node';
import type { KubeVirt } from '../../shared/api/index.ts';
import type { VirtualMachineExport } from '../../shared/api/export.ts';
import { parseDurationMs } from '../../shared/api/go-duration.ts';
import { CERT_PARAMS_ANNOTATION, DEFAULT_CERT_DURATION_MS, DEFAULT_RENEW_BEFORE_FRACTION, EXPORT_SERVICE_LABEL, podNameOf, podVolumeNameOf, selectorValueOf } from './names.ts';
import { exportRef } from './render-objects.ts';
import type { ExportVolume, SourceResult } from './source.ts';
import { backupPodPart } from './backup-source.ts';

export interface CertParams {
  readonly durationMs: number;
  readonly renewBeforeMs: number;
}

/** `certificateRotateStrategy.selfSigned.server` of the KubeVirt CR: 24 h, renewBefore 0.2 × the duration, by default. */
export function certParamsOf(kv: KubeVirt | undefined): CertParams {
  const server = (kv?.spec as { certificateRotateStrategy?: { selfSigned?: { server?: { duration?: string; renewBefore?: string } } } } | undefined)?.certificateRotateStrategy?.selfSigned?.server;
  const durationMs = (server?.duration !== undefined ? parseDurationMs(server.duration) : undefined) ?? DEFAULT_CERT_DURATION_MS;
  const renewBeforeMs = (server?.renewBefore !== undefined ? parseDurationMs(server.renewBefore) : undefined) ?? durationMs * DEFAULT_RENEW_BEFORE_FRACTION;
  return { durationMs, renewBeforeMs };
}

/** The annotation value: Go's JSON of `{Duration, RenewBefore time.Duration}` (nanoseconds). */
export const certParamsAnnotation = (p: CertParams) => JSON.stringify({ Duration: Math.round(p.durationMs * 1e6), RenewBefore: Math.round(p.renewBeforeMs * 1e6) });

/** RFC 3339 with seconds, as Go's `time.RFC3339` prints UTC. */
export const rfc3339 = (ms: number) => `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`;

/** The pod's deadline: the earlier of certificate renewal and the TTL. */
export const podDeadlineMs = (nowMs: number, p: CertParams, ttlMs: number) => Math.min(nowMs + p.durationMs - p.renewBeforeMs, ttlMs);

const isBlock = (v: ExportVolume) => v.claim.spec?.volumeMode === 'Block';

/** The URIs the export server serves for volume `i` (and which formats they are). */
export function volumeUris(v: ExportVolume): { format: string; uri: string }[] {
  const pvc = v.claim.metadata?.name ?? '';
  return isBlock(v) || v.kubevirtContent
    ? [
        { format: 'raw', uri: `/volumes/${pvc}/disk.img` },
        { format: 'gzip', uri: `/volumes/${pvc}/disk.img.gz` },
      ]
    : [
        { format: 'dir', uri: `/volumes/${pvc}/dir/` },
        { format: 'tar.gz', uri: `/volumes/${pvc}/disk.tar.gz` },
      ];
}

const ENV_OF_FORMAT: Record<string, string> = { raw: 'RAW_URI', gzip: 'RAW_GZIP_URI', dir: 'DIR_URI', 'tar.gz': 'ARCHIVE_URI' };
const ENV_ORDER = ['raw', 'gzip', 'tar.gz', 'dir'];

export interface ExporterPodInput {
  readonly image: string;
  readonly tokenSecretName: string;
  /** `secret-<10 random>`: the serving certificate the controller creates while the pod is Pending. */
  readonly certSecretName: string;
  readonly certParams: CertParams;
  readonly nowMs: number;
  readonly ttlExpirationMs: number;
  /** The VM manifest ConfigMap, for VM and snapshot sources. */
  readonly manifestConfigMap?: string;
}

export function renderExporterPod(vme: VirtualMachineExport, src: SourceResult, input: ExporterPodInput): V1Pod {
  const name = vme.metadata?.name ?? '';
  const env: V1EnvVar[] = [
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'CERT_FILE', value: '/cert/tls.crt' },
    { name: 'KEY_FILE', value: '/cert/tls.key' },
    { name: 'TOKEN_FILE', value: '/token/token' },
    { name: 'DEADLINE', value: rfc3339(podDeadlineMs(input.nowMs, input.certParams, input.ttlExpirationMs)) },
    { name: 'EXPORT_SECRET_DEF_URI', value: '/manifests/secret' },
  ];
  const volumes: V1Volume[] = [
    { name: 'certificates', secret: { secretName: input.certSecretName } },
    { name: 'token', secret: { secretName: input.tokenSecretName } },
  ];
  const mounts: V1VolumeMount[] = [
    { name: 'certificates', mountPath: '/cert' },
    { name: 'token', mountPath: '/token' },
  ];
  const devices: V1VolumeDevice[] = [];
  // A VM or snapshot source adds its manifest URI before its volumes (KubeVirt's ConfigurePod).
  if (src.kind === 'vm' || src.kind === 'snapshot') env.push({ name: 'EXPORT_VM_DEF_URI', value: '/manifests/all' });
  // A backup source's part: its volumes' endpoints, the tunnel CA, and perhaps an affinity to the VM's launcher.
  const backupPart = src.backup ? backupPodPart(src.backup) : undefined;
  if (backupPart) env.push(...backupPart.env);
  src.volumes.forEach((v, i) => {
    const vol = podVolumeNameOf(v.claim.metadata?.name ?? '');
    // Read-only is the mount's (below), not the claim volume's: KubeVirt leaves the volume's unset.
    volumes.push({ name: vol, persistentVolumeClaim: { claimName: v.claim.metadata?.name ?? '' } });
    const path = isBlock(v) ? `/dev/export-volumes/${vol}` : `/export-volumes/${vol}`;
    if (isBlock(v)) devices.push({ name: vol, devicePath: path });
    else mounts.push({ name: vol, mountPath: path, readOnly: true });
    env.push({ name: `VOLUME${i}_EXPORT_PATH`, value: path });
    // KubeVirt's env order: raw, raw.gz; or the archive, then the directory.
    for (const u of [...volumeUris(v)].sort((a, b) => ENV_ORDER.indexOf(a.format) - ENV_ORDER.indexOf(b.format))) env.push({ name: `VOLUME${i}_EXPORT_${ENV_OF_FORMAT[u.format]}`, value: u.uri });
  });
  if (input.manifestConfigMap) {
    volumes.push({ name: 'manifest-data', configMap: { name: input.manifestConfigMap } });
    mounts.push({ name: 'manifest-data', mountPath: '/manifest_data' });
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podNameOf(name),
      namespace: vme.metadata?.namespace ?? '',
      // The renderer's `kubevirt.io=virt-exporter` does not survive: the export's labels replace it (quirk 11).
      labels: { [EXPORT_SERVICE_LABEL]: selectorValueOf(name), ...(vme.metadata?.labels ?? {}) },
      annotations: { [CERT_PARAMS_ANNOTATION]: certParamsAnnotation(input.certParams), ...(vme.metadata?.annotations ?? {}) },
      ownerReferences: [exportRef(vme)],
    },
    spec: {
      restartPolicy: 'Never',
      ...(backupPart?.affinity ? { affinity: backupPart.affinity } : {}),
      securityContext: { runAsNonRoot: true, fsGroup: 107, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'exporter',
          image: input.image,
          imagePullPolicy: 'IfNotPresent',
          env,
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          resources: { requests: { cpu: '100m', memory: '200Mi' }, limits: { cpu: '1', memory: '1Gi' } },
          readinessProbe: { httpGet: { path: '/exportready', port: 8443 as never, scheme: 'HTTPS' }, initialDelaySeconds: 5, periodSeconds: 5 },
          volumeMounts: mounts,
          ...(devices.length ? { volumeDevices: devices } : {}),
        },
      ],
      volumes,
    },
  };
}

/** The name of the Secret the pod's `certificates` volume names. */
export const certSecretNameOfPod = (pod: V1Pod) => pod.spec?.volumes?.find((v) => v.name === 'certificates')?.secret?.secretName;
