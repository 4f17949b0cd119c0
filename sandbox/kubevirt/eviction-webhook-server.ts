/**
 * virt-api's launcher eviction interceptor, migration create validator, VMI/VM mutators
 * (mutation-webhook.ts, in their own MutatingWebhookConfiguration) and the identity rules of its
 * VMI create/update admitters (identity-admission.ts) as KubeVirt deploys them on a
 * real cluster: a ValidatingWebhookConfiguration on `pods/eviction` CREATE and on
 * `virtualmachineinstancemigrations` CREATE (migration-admission.ts), served over HTTPS. The real lane's
 * kube-apiserver calls it for every eviction (`kubectl drain`, the workload updater's Evict); the
 * answer is the same pure decision the emulator's in-process hook applies
 * (`eviction-admission.ts`): allow, or deny with 429 — after marking the VMI
 * (`status.evacuationNodeName`, the descheduler annotation) when its eviction strategy migrates.
 *
 * The server listens on 127.0.0.1 with a certificate from a CA made at start (../pki.ts); the CA
 * goes into the configuration's `caBundle`. It reads the pod, the VMI and the KubeVirt CR and
 * writes the mark through the API as virt-api's own identity (`virt-api`, on the real lane a role that may get pods, get and patch VMIs and read the KubeVirt CR, nothing else).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { AdmissionregistrationV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { isNotFound, JSON_PATCH, KUBEVIRT, nodeSideApi, plain, statusCodeOf, type NodeSideApi } from '../nodes/api.ts';
import { issueServingCertificate, makeCa } from '../pki.ts';
import { admitEviction, launcherVmiName, type EvictionVerdict } from './eviction-admission.ts';
import { admitMigration, MIGRATION_CREATE_PATH, MIGRATION_CREATE_VALIDATOR, type MigrationRequest, type MigrationVerdict } from './migration-admission.ts';
import type { Vmi } from '../nodes/objects.ts';
import type { KubeVirt } from '../../shared/api/index.ts';
import { mutateOnCreate, mutatingWebhookConfiguration, mutationPatch, MIGRATION_MUTATE_PATH, VIRT_API_MUTATOR, VM_MUTATE_PATH, VMI_MUTATE_PATH } from './mutation-webhook.ts';
import { admitMigrationPriority, admitVmiCreate, admitVmiUpdate, revertedVmiStatus, VMI_CREATE_VALIDATE_PATH, VMI_CREATE_VALIDATOR, VMI_UPDATE_VALIDATE_PATH, VMI_UPDATE_VALIDATOR, type IdentityVerdict } from './identity-admission.ts';

export { VIRT_API_IDENTITY } from './eviction-admission.ts';

/** KubeVirt's names: the configuration virt-operator creates, the webhook in it and its path. */
export const VIRT_API_VALIDATOR = 'virt-api-validator';
export const EVICTION_INTERCEPTOR = 'virt-launcher-eviction-interceptor.kubevirt.io';
export const EVICTION_PATH = '/launcher-eviction-validate';

/** The fields of an admission.k8s.io/v1 AdmissionReview request this webhook reads. */
interface AdmissionRequest {
  uid?: string;
  name?: string;
  namespace?: string;
  operation?: string;
  subResource?: string;
  dryRun?: boolean;
  object?: { metadata?: { annotations?: Record<string, string> }; spec?: Record<string, unknown> };
  /** The object before an UPDATE. */
  oldObject?: Record<string, unknown>;
  /** Who the request acts as (the impersonated user when it impersonated one). */
  userInfo?: { username?: string };
}

export interface EvictionWebhookServer {
  /** `https://127.0.0.1:<port>`. */
  url: string;
  /** PEM of the CA that signed the serving certificate (the configuration's caBundle). */
  caPem: string;
  /** Verdicts given, in order (`allow ns/pod`, `deny ns/pod: message`), for tests. */
  verdicts(): string[];
  stop(): Promise<void>;
}

export interface EvictionWebhookOptions {
  /** virt-api's kubeconfig (reads and the mark). */
  kc: KubeConfig;
  onError?: (what: string, err: unknown) => void;
}

/** `spec.configuration.evictionStrategy` of the KubeVirt CR in `kubevirt`, if any. */
async function clusterEvictionStrategy(api: NodeSideApi): Promise<string | undefined> {
  const list = plain<{ items?: { spec?: { configuration?: { evictionStrategy?: unknown } } }[] }>(
    await api.custom.listNamespacedCustomObject({ ...KUBEVIRT, namespace: 'kubevirt', plural: 'kubevirts' }),
  );
  const strategy = list.items?.[0]?.spec?.configuration?.evictionStrategy;
  return typeof strategy === 'string' ? strategy : undefined;
}

/** The verdict for one eviction: reads what the decision needs, writes the mark unless dry-run. */
async function review(api: NodeSideApi, req: AdmissionRequest): Promise<EvictionVerdict> {
  if (req.operation !== 'CREATE' || req.subResource !== 'eviction' || !req.name || !req.namespace) return { kind: 'allow' };
  let pod: Parameters<typeof launcherVmiName>[0];
  try {
    pod = plain(await api.core.readNamespacedPod({ namespace: req.namespace, name: req.name }));
  } catch (err) {
    // No pod: the API server answers the eviction itself (404).
    if (isNotFound(err)) return { kind: 'allow' };
    throw err;
  }
  const vmiName = launcherVmiName(pod);
  if (vmiName === undefined) return { kind: 'allow' };
  let vmi: VirtualMachineInstance | undefined;
  try {
    vmi = plain(await api.custom.getNamespacedCustomObject({ ...KUBEVIRT, namespace: req.namespace, plural: 'virtualmachineinstances', name: vmiName }));
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  const verdict = admitEviction(pod, vmi, req.object ?? {}, await clusterEvictionStrategy(api));
  if (verdict.kind === 'mark' && !req.dryRun) {
    await api.custom.patchNamespacedCustomObject({ ...KUBEVIRT, namespace: req.namespace, plural: 'virtualmachineinstances', name: vmiName, body: verdict.patch }, JSON_PATCH);
  }
  return verdict;
}

/** The migration create validator's verdict (virt-api refuses with 400). */
async function reviewMigration(api: NodeSideApi, req: AdmissionRequest): Promise<MigrationVerdict> {
  const migration = (req.object ?? {}) as MigrationRequest;
  const name = migration.spec?.vmiName;
  let vmi: Vmi | undefined;
  if (name && req.namespace) {
    try {
      vmi = plain(await api.custom.getNamespacedCustomObject({ ...KUBEVIRT, namespace: req.namespace, plural: 'virtualmachineinstances', name }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return admitMigration({ ...migration, metadata: { namespace: req.namespace ?? '' } }, vmi);
}

/** The mutators' answer: the object as virt-api would store it, as a JSON patch. */
async function reviewMutation(api: NodeSideApi, req: AdmissionRequest, resource: string): Promise<object> {
  let patch: object[] | undefined;
  if (req.operation === 'CREATE' && req.object) {
    const list = plain<{ items?: KubeVirt[] }>(await api.custom.listNamespacedCustomObject({ ...KUBEVIRT, namespace: 'kubevirt', plural: 'kubevirts' }));
    const mutated = mutateOnCreate(resource, req.object as Record<string, unknown>, list.items?.[0], new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
    if (mutated) patch = mutationPatch(mutated);
  } else if (req.operation === 'UPDATE' && resource === 'virtualmachineinstances' && req.object && req.oldObject) {
    // The VMI mutator's UPDATE branch: a status change by anyone but KubeVirt's accounts is put back.
    const reverted = revertedVmiStatus(req.oldObject, req.object as Record<string, unknown>, req.userInfo?.username ?? '');
    if (reverted) patch = [{ op: 'add', path: '/status', value: reverted.status }];
  }
  const response = patch ? { uid: req.uid ?? '', allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') } : { uid: req.uid ?? '', allowed: true };
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}

/** A validating answer from an identity verdict (a refusal keeps virt-api's code, reason and cause). */
function identityReview(uid: string, verdict: IdentityVerdict): object {
  const response = verdict.allowed
    ? { uid, allowed: true }
    : { uid, allowed: false, status: { code: verdict.code, reason: 'Invalid', message: verdict.message, details: { causes: [{ reason: 'FieldValueInvalid', message: verdict.message, ...(verdict.field ? { field: verdict.field } : {}) }] } } };
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}

/** The VMI create and update admitters' identity rules. */
function reviewVmi(req: AdmissionRequest, path: string): object {
  const user = req.userInfo?.username ?? '';
  const object = (req.object ?? {}) as Record<string, unknown>;
  const verdict = path === VMI_CREATE_VALIDATE_PATH ? admitVmiCreate(object, user) : req.oldObject ? admitVmiUpdate(req.oldObject, object, user) : ({ allowed: true } as const);
  return identityReview(req.uid ?? '', verdict);
}

/** The AdmissionReview answer: every refusal is a 429, as virt-api's. */
export function admissionResponse(uid: string, verdict: EvictionVerdict): object {
  const response = verdict.kind === 'allow' ? { uid, allowed: true } : { uid, allowed: false, status: { code: 429, message: verdict.message } };
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

function reply(res: ServerResponse, code: number, body: object): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Starts the HTTPS server (a new CA and serving certificate for 127.0.0.1). */
export async function startEvictionWebhookServer(opts: EvictionWebhookOptions): Promise<EvictionWebhookServer> {
  const api = nodeSideApi(opts.kc);
  const ca = await makeCa('virt-api-webhook-ca@sandbox');
  const serving = await issueServingCertificate(ca, 'virt-api.kubevirt.svc', { ips: ['127.0.0.1'], dns: ['localhost', 'virt-api.kubevirt.svc'] });
  const verdicts: string[] = [];
  const server = createServer({ key: serving.keyPem, cert: serving.certPem }, (req, res) => {
    void (async () => {
      const path = req.url?.split('?')[0];
      const mutates = path === VMI_MUTATE_PATH ? 'virtualmachineinstances' : path === VM_MUTATE_PATH ? 'virtualmachines' : path === MIGRATION_MUTATE_PATH ? 'virtualmachineinstancemigrations' : undefined;
      const vmiValidates = path === VMI_CREATE_VALIDATE_PATH || path === VMI_UPDATE_VALIDATE_PATH;
      if (req.method !== 'POST' || (path !== EVICTION_PATH && path !== MIGRATION_CREATE_PATH && mutates === undefined && !vmiValidates)) return reply(res, 404, { message: 'not found' });
      let request: AdmissionRequest = {};
      try {
        request = ((await bodyOf(req)) as { request?: AdmissionRequest }).request ?? {};
        if (mutates !== undefined) return reply(res, 200, await reviewMutation(api, request, mutates));
        if (vmiValidates) return reply(res, 200, reviewVmi(request, path));
        if (path === MIGRATION_CREATE_PATH) {
          // virt-api checks the priority before it reads the VMI.
          const priority = admitMigrationPriority((request.object ?? {}) as Record<string, unknown>, request.userInfo?.username ?? '');
          if (!priority.allowed) return reply(res, 200, identityReview(request.uid ?? '', priority));
          const m = await reviewMigration(api, request);
          verdicts.push(`${m.allowed ? 'allow' : 'deny'} migration ${request.namespace}/${request.name ?? ''}${m.allowed ? '' : `: ${m.message}`}`);
          const response = m.allowed ? { uid: request.uid ?? '', allowed: true } : { uid: request.uid ?? '', allowed: false, status: { code: 400, message: m.message } };
          return reply(res, 200, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response });
        }
        const verdict = await review(api, request);
        verdicts.push(`${verdict.kind === 'allow' ? 'allow' : 'deny'} ${request.namespace}/${request.name}${verdict.kind === 'allow' ? '' : `: ${verdict.message}`}`);
        reply(res, 200, admissionResponse(request.uid ?? '', verdict));
      } catch (err) {
        // As virt-api: an error reading or marking refuses the eviction (drain retries).
        opts.onError?.('eviction webhook', err);
        const code = statusCodeOf(err) ?? 500;
        reply(res, 200, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: request.uid ?? '', allowed: false, status: { code, message: err instanceof Error ? err.message : String(err) } } });
      }
    })();
  });
  // kube-apiserver's webhook client (Go's http.Transport) keeps idle connections for 90 s; Node
  // closes its side after 5 s by default, so a call sent just as the server closed the idle
  // connection was reset ("connection reset by peer"), the eviction failed and `kubectl drain`
  // gave up (seen on the real lane under load). The server outlives the client's idle timeout.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 125_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    caPem: ca.certPem,
    verdicts: () => [...verdicts],
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** virt-operator's ValidatingWebhookConfiguration for the interceptor at `url`. */
export function evictionWebhookConfiguration(url: string, caPem: string): object {
  // The VMI create and update admitters, with only their identity rules here (identity-admission.ts).
  const vmiValidator = (name: string, path: string, operation: string) => ({
    name,
    admissionReviewVersions: ['v1'],
    clientConfig: { url: `${url}${path}`, caBundle: Buffer.from(caPem).toString('base64') },
    rules: [{ operations: [operation], apiGroups: ['kubevirt.io'], apiVersions: ['v1'], resources: ['virtualmachineinstances'], scope: 'Namespaced' }],
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    sideEffects: 'None',
    timeoutSeconds: 10,
  });
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: VIRT_API_VALIDATOR, labels: { 'kubevirt.io': 'virt-api-validator', 'app.kubernetes.io/managed-by': 'virt-operator' } },
    webhooks: [
      {
        name: EVICTION_INTERCEPTOR,
        admissionReviewVersions: ['v1'],
        clientConfig: { url: `${url}${EVICTION_PATH}`, caBundle: Buffer.from(caPem).toString('base64') },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/eviction'], scope: 'Namespaced' }],
        failurePolicy: 'Fail',
        matchPolicy: 'Equivalent',
        sideEffects: 'NoneOnDryRun',
        timeoutSeconds: 10,
      },
      {
        name: MIGRATION_CREATE_VALIDATOR,
        admissionReviewVersions: ['v1'],
        clientConfig: { url: `${url}${MIGRATION_CREATE_PATH}`, caBundle: Buffer.from(caPem).toString('base64') },
        rules: [{ operations: ['CREATE'], apiGroups: ['kubevirt.io'], apiVersions: ['v1'], resources: ['virtualmachineinstancemigrations'], scope: 'Namespaced' }],
        failurePolicy: 'Fail',
        matchPolicy: 'Equivalent',
        sideEffects: 'None',
        timeoutSeconds: 10,
      },
      vmiValidator(VMI_CREATE_VALIDATOR, VMI_CREATE_VALIDATE_PATH, 'CREATE'),
      vmiValidator(VMI_UPDATE_VALIDATOR, VMI_UPDATE_VALIDATE_PATH, 'UPDATE'),
    ],
  };
}

/** Creates (or replaces) the configurations, as virt-operator does (identity of `kc`: the operator). */
export async function registerEvictionWebhook(kc: KubeConfig, url: string, caPem: string): Promise<void> {
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  const mutating = mutatingWebhookConfiguration(url, caPem) as never;
  try {
    await admission.createMutatingWebhookConfiguration({ body: mutating });
  } catch (err) {
    if (statusCodeOf(err) !== 409) throw err;
    const existing = await admission.readMutatingWebhookConfiguration({ name: VIRT_API_MUTATOR });
    await admission.replaceMutatingWebhookConfiguration({ name: VIRT_API_MUTATOR, body: { ...(mutating as object), metadata: { ...existing.metadata } } as never });
  }
  const body = evictionWebhookConfiguration(url, caPem) as never;
  try {
    await admission.createValidatingWebhookConfiguration({ body });
  } catch (err) {
    if (statusCodeOf(err) !== 409) throw err;
    const existing = await admission.readValidatingWebhookConfiguration({ name: VIRT_API_VALIDATOR });
    await admission.replaceValidatingWebhookConfiguration({ name: VIRT_API_VALIDATOR, body: { ...(body as object), metadata: { ...existing.metadata } } as never });
  }
}
