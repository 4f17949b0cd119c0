/**
 * DataVolume clone authorization (KubeVirt's handleCloneDataVolume with CDI's AuthorizeSA, issue
 * 38 item 6), after the clone source is resolved as KubeVirt writes it (a DataSource replaced by
 * what it points at): which SubjectAccessReviews are sent as which service account, and what the VM
 * controller makes of the answers. The emulator API server evaluates no RBAC, so the
 * SubjectAccessReview endpoint is played by the test (a stub answering from a table — the one
 * mock here); namespaces and claims are the emulator's.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1SubjectAccessReview } from '@kubernetes/client-node';
import type { DataVolume, VirtualMachine } from '../../../shared/api/index.ts';
import { DATA_SOURCES, NAMESPACES, PVCS, SUBJECT_ACCESS_REVIEWS, VMS, DATA_VOLUMES, EVENTS } from '../../../shared/api/resources.ts';
import type { KubeObject, Resource } from '../../../shared/kube/client.ts';
import { checkClone, vmServiceAccount } from '../../../functions/vm/clone-auth.ts';
import { reconcileVm } from '../../../functions/vm/reconcile.ts';
import type { VmDeps } from '../../../functions/vm/deps.ts';
import { NS, sandboxPerFile, vmManifest } from './support.ts';

const ctx = sandboxPerFile();

/** The deps with SubjectAccessReviews answered by `allow` (attributes as `verb group/resource/sub`), every review kept in `sent`. */
function withSar(deps: VmDeps, allow: (key: string) => boolean, sent: V1SubjectAccessReview[]): VmDeps {
  return {
    ...deps,
    kube: {
      ...deps.kube,
      create: async <T extends KubeObject>(res: Resource<T>, obj: T): Promise<T> => {
        if (res !== (SUBJECT_ACCESS_REVIEWS as unknown)) return deps.kube.create(res, obj);
        const sar = obj as unknown as V1SubjectAccessReview;
        sent.push(sar);
        const ra = sar.spec.resourceAttributes!;
        return { ...sar, status: { allowed: allow(`${ra.verb} ${ra.group ?? ''}/${ra.resource ?? ''}${ra.subresource ? `/${ra.subresource}` : ''}`) } } as unknown as T;
      },
    },
  };
}

function cloneVm(name: string, source: { pvc?: { namespace: string; name: string }; snapshot?: { namespace: string; name: string } }, serviceAccount?: string): VirtualMachine {
  const vm = vmManifest(name, { runStrategy: 'Halted', dataVolumeTemplates: [{ metadata: { name: `${name}-dv` }, spec: { source, storage: { resources: { requests: { storage: '1Gi' } } } } }] });
  vm.spec.template.spec!.volumes = [{ name: 'root', dataVolume: { name: `${name}-dv` } }];
  if (serviceAccount) vm.spec.template.spec!.serviceAccountName = serviceAccount;
  return vm;
}

async function ensureNamespace(name: string): Promise<void> {
  if (!(await ctx.h.kube.get(NAMESPACES, undefined, name))) await ctx.h.kube.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

describe('the VM\'s service account', () => {
  test('the template\'s, else a serviceAccount volume\'s, else default', () => {
    // arrange
    const plain = vmManifest('sa');
    const byVolume = vmManifest('sa');
    byVolume.spec.template.spec!.volumes!.push({ name: 'sa', serviceAccount: { serviceAccountName: 'from-volume' } });
    const byName = structuredClone(byVolume);
    byName.spec.template.spec!.serviceAccountName = 'from-spec';
    // act / assert
    assert.deepEqual([plain, byVolume, byName].map(vmServiceAccount), ['default', 'from-volume', 'from-spec']);
  });
});

describe('a DataVolume that clones from another namespace', () => {
  test('allowed: one review as the service account (DataVolume source), then the DataVolume', async () => {
    // arrange
    await ensureNamespace('golden');
    await ctx.h.kube.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'fedora', namespace: 'golden' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
    await ctx.h.kube.create(VMS, cloneVm('clone-ok', { pvc: { namespace: 'golden', name: 'fedora' } }, 'builder'));
    const sent: V1SubjectAccessReview[] = [];
    // act
    await reconcileVm(`${NS}/clone-ok`, withSar(ctx.h.deps, () => true, sent));
    // assert
    assert.deepEqual(sent.map((s) => s.spec), [{
      user: `system:serviceaccount:${NS}:builder`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated'],
      resourceAttributes: { namespace: 'golden', verb: 'create', group: 'cdi.kubevirt.io', resource: 'datavolumes', subresource: 'source', name: 'fedora' },
    }]);
    assert.ok(await ctx.h.kube.get(DATA_VOLUMES, NS, 'clone-ok-dv'), 'the DataVolume is created');
  });

  test('refused: no DataVolume, KubeVirt\'s event and Failure condition', async () => {
    // arrange
    await ensureNamespace('golden');
    await ctx.h.kube.create(VMS, cloneVm('clone-no', { pvc: { namespace: 'golden', name: 'fedora' } }));
    const sent: V1SubjectAccessReview[] = [];
    // act
    await reconcileVm(`${NS}/clone-no`, withSar(ctx.h.deps, () => false, sent)).catch(() => undefined);
    // assert
    const reason = `User system:serviceaccount:${NS}:default has insufficient permissions in clone source namespace golden`;
    assert.deepEqual(sent.map((s) => s.spec.resourceAttributes?.resource), ['datavolumes', 'pods'], 'the claim clone asks for the DataVolume source, then pods');
    assert.equal(await ctx.h.kube.get(DATA_VOLUMES, NS, 'clone-no-dv'), undefined, 'no DataVolume');
    const events = (await ctx.h.kube.list(EVENTS, NS)).items as { reason?: string; message?: string }[];
    assert.ok(events.some((e) => e.reason === 'UnauthorizedDataVolumeCreate' && e.message === `Not authorized to create DataVolume clone-no-dv: ${reason}`), JSON.stringify(events.map((e) => e.message)));
    const failure = (await ctx.h.kube.get(VMS, NS, 'clone-no'))?.status?.conditions?.find((c) => c.type === 'Failure');
    assert.equal(failure?.message, `Error encountered while creating DataVolumes: not authorized to create DataVolume: ${reason}`);
  });

  test('a DataSource in another namespace: resolved to its claim (the DataVolume written without sourceRef, as KubeVirt does), then reviewed', async () => {
    // arrange
    await ensureNamespace('golden');
    await ctx.h.kube.create(DATA_SOURCES, { apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataSource', metadata: { name: 'fedora-ds', namespace: 'golden' }, spec: { source: { pvc: { namespace: 'golden', name: 'fedora' } } } });
    const vm = cloneVm('clone-ds', { pvc: { namespace: 'x', name: 'x' } });
    vm.spec.dataVolumeTemplates![0]!.spec = { sourceRef: { kind: 'DataSource', name: 'fedora-ds', namespace: 'golden' }, storage: { resources: { requests: { storage: '1Gi' } } } };
    await ctx.h.kube.create(VMS, vm);
    const sent: V1SubjectAccessReview[] = [];
    // act
    await reconcileVm(`${NS}/clone-ds`, withSar(ctx.h.deps, () => true, sent));
    // assert
    const dv = await ctx.h.kube.get(DATA_VOLUMES, NS, 'clone-ds-dv');
    assert.deepEqual(dv?.spec.source, { pvc: { namespace: 'golden', name: 'fedora' } });
    assert.equal(dv?.spec.sourceRef, undefined, 'the reference replaced by what it resolved to');
    assert.deepEqual(sent.map((s) => s.spec.resourceAttributes?.namespace), ['golden'], 'reviewed against the resolved source');
  });

  test('a DataSource that is not there: no DataVolume, a FailedCreate failure naming it', async () => {
    // arrange
    const vm = cloneVm('clone-nods', { pvc: { namespace: 'x', name: 'x' } });
    vm.spec.dataVolumeTemplates![0]!.spec = { sourceRef: { kind: 'DataSource', name: 'missing-ds' }, storage: { resources: { requests: { storage: '1Gi' } } } };
    await ctx.h.kube.create(VMS, vm);
    // act
    await reconcileVm(`${NS}/clone-nods`, ctx.h.deps).catch(() => undefined);
    // assert
    assert.equal(await ctx.h.kube.get(DATA_VOLUMES, NS, 'clone-nods-dv'), undefined);
    const failure = (await ctx.h.kube.get(VMS, NS, 'clone-nods'))?.status?.conditions?.find((c) => c.type === 'Failure');
    assert.equal(failure?.message, 'Error encountered while creating DataVolumes: unable to create DataVolume manifest: datasources.cdi.kubevirt.io "missing-ds" not found');
  });

  const table: { name: string; source: Parameters<typeof cloneVm>[1]; allow: (k: string) => boolean; annotations?: Record<string, string>; want: { refused: boolean; reviews: number; sourceMissing?: boolean } }[] = [
    { name: 'the same namespace: no review', source: { pvc: { namespace: NS, name: 'local' } }, allow: () => false, want: { refused: false, reviews: 0, sourceMissing: true } },
    { name: 'a claim clone allowed by pods create alone', source: { pvc: { namespace: 'golden', name: 'fedora' } }, allow: (k) => k === 'create /pods', want: { refused: false, reviews: 2 } },
    { name: 'a snapshot clone: the DataVolume source suffices', source: { snapshot: { namespace: 'golden', name: 'snap' } }, allow: (k) => k.endsWith('/source'), want: { refused: false, reviews: 1 } },
    { name: 'a snapshot clone: else pods and pvcs both', source: { snapshot: { namespace: 'golden', name: 'snap' } }, allow: (k) => !k.endsWith('/source'), want: { refused: false, reviews: 3 } },
    { name: 'a snapshot clone: pods without pvcs is refused', source: { snapshot: { namespace: 'golden', name: 'snap' } }, allow: (k) => k === 'create /pods', want: { refused: true, reviews: 3 } },
    { name: 'refused, but pre-populated: no token needed, allowed', source: { pvc: { namespace: 'golden', name: 'fedora' } }, allow: () => false, annotations: { 'cdi.kubevirt.io/storage.prePopulated': 'x' }, want: { refused: false, reviews: 2 } },
    { name: 'a source namespace that does not exist: refused', source: { pvc: { namespace: 'nowhere', name: 'x' } }, allow: () => true, want: { refused: true, reviews: 0, sourceMissing: true } },
  ];
  for (const row of table) {
    test(row.name, async () => {
      // arrange
      await ensureNamespace('golden');
      const vm = cloneVm('c', row.source);
      vm.metadata = { ...vm.metadata, uid: 'vm-uid' };
      const dv = { metadata: { name: 'c-dv', annotations: row.annotations ?? {} }, spec: vm.spec.dataVolumeTemplates![0]!.spec } as DataVolume;
      const sent: V1SubjectAccessReview[] = [];
      // act
      const got = await checkClone(withSar(ctx.h.deps, row.allow, sent).kube, vm, dv);
      // assert
      assert.equal(got.refused !== undefined, row.want.refused, `refused: ${got.refused}`);
      assert.equal(sent.length, row.want.reviews);
      assert.equal(got.sourceMissing !== undefined, row.want.sourceMissing ?? false, `source missing: ${got.sourceMissing}`);
    });
  }
});
