/**
 * virt-api's pod eviction webhook on the emulator, wired into the sandbox API server's eviction
 * admission (`api.admission.onEviction`); the real lane calls the same decision over HTTPS
 * (eviction-webhook-server.ts). The decision is `eviction-admission.ts`; this adapter reads the
 * VMI and the cluster eviction strategy from the store, writes the mark as virt-api does (a JSON
 * patch of the VMI, identity {@link VIRT_API_IDENTITY}, skipped on dry-run), and refuses with 429,
 * which is what makes `kubectl drain` retry until the evacuation migration has moved the VMI.
 */
import type { EvictionHook } from '../apiserver/eviction.ts';
import { ApiError } from '../apiserver/errors.ts';
import type { Core } from '../apiserver/core.ts';
import { patchObject } from '../apiserver/writes.ts';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { admitEviction, launcherVmiName, VIRT_API_IDENTITY } from './eviction-admission.ts';
import { serviceAccountUser } from '../../shared/kube/kubevirt-identity.ts';
import { SANDBOX_KUBEVIRT_NAMESPACE } from './identity-admission.ts';

/** virt-api's own user, which its identity rules count as KubeVirt's. */
const VIRT_API_USER = serviceAccountUser(SANDBOX_KUBEVIRT_NAMESPACE, 'kubevirt-apiserver');

function vmiResource(core: Core) {
  const res = core.registry.byPath('kubevirt.io', 'v1', 'virtualmachineinstances');
  if (!res) throw new Error('the sandbox serves no kubevirt.io/v1 virtualmachineinstances');
  return res;
}

/** `spec.configuration.evictionStrategy` of the (first) KubeVirt CR, if any. */
function clusterEvictionStrategy(core: Core): string | undefined {
  const res = core.registry.byPath('kubevirt.io', 'v1', 'kubevirts');
  const kv = res ? core.store.scan(res)[0] : undefined;
  const strategy = (kv?.spec as { configuration?: { evictionStrategy?: unknown } } | undefined)?.configuration?.evictionStrategy;
  return typeof strategy === 'string' ? strategy : undefined;
}

/** The hook: allow, or mark and refuse, or refuse (every refusal is a 429, as upstream). */
export function virtApiEvictionHook(): EvictionHook {
  return (core, request) => {
    const vmiName = launcherVmiName(request.pod);
    if (vmiName === undefined) return;
    const namespace = request.pod.metadata.namespace;
    const res = vmiResource(core);
    const vmi = core.store.peek(res, namespace, vmiName) as VirtualMachineInstance | undefined;
    const verdict = admitEviction(request.pod, vmi, request.eviction, clusterEvictionStrategy(core));
    if (verdict.kind === 'allow') return;
    if (verdict.kind === 'mark' && !request.dryRun) {
      patchObject(core, { res, namespace, identity: VIRT_API_IDENTITY, user: VIRT_API_USER, dryRun: false }, vmiName, 'application/json-patch+json', verdict.patch);
    }
    throw new ApiError(429, 'TooManyRequests', verdict.message);
  };
}
