/**
 * The SELinux context virt-handler reports and what the migration controller makes of it
 * (reference-node-side §5.20; KubeVirt's `setTargetPodSELinuxLevel`), on sandbox nodes whose
 * simulated handler reports none, or an SELinux context (node shape `selinuxContext`):
 * - never written (`''`): the target pod cannot be made — the VMI's Warning says "SELinux context
 *   not set on VMI status" — and the migration stays Pending without one;
 * - an SELinux node's context: the target pod gets the source's level, and the migration succeeds.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { EVENTS, MIGRATIONS, PODS, VMIS } from '../../shared/api/resources.ts';
import { NS, startSlice, until, vmiManifest, type Slice } from './support.ts';

const CONTEXT = 'system_u:system_r:container_t:s0:c5,c6';
const migrate = (s: Slice, vmi: string) => s.kube.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: `${vmi}-mig`, namespace: NS }, spec: { vmiName: vmi } });
const running = (s: Slice, name: string) => until(`${name} Running`, async () => (await s.kube.get(VMIS, NS, name))?.status?.phase === 'Running', { problems: s.problems });

describe('a handler that never writes selinuxContext', () => {
  let s: Slice;
  after(async () => s?.stop());
  test('the migration target pod is not created: Warning "SELinux context not set on VMI status", the migration Pending', async () => {
    // arrange
    s = await startSlice({ nodes: 2, nodeShapes: { node01: { selinuxContext: '' }, node02: { selinuxContext: '' } } });
    await s.kube.create(VMIS, vmiManifest('se-none'));
    await running(s, 'se-none');
    assert.equal((await s.kube.get(VMIS, NS, 'se-none'))?.status?.selinuxContext, undefined);
    // act
    const m = await migrate(s, 'se-none');
    // assert
    await until('the VMI\'s FailedCreate event', async () => {
      const events = (await s.kube.list(EVENTS, NS)).items as { involvedObject?: { name?: string }; reason?: string; message?: string }[];
      return events.some((e) => e.involvedObject?.name === 'se-none' && e.reason === 'FailedCreate' && (e.message ?? '').includes('SELinux context not set on VMI status'));
    }, { problems: s.problems });
    // The event goes out before the pass writes the migration's status.
    await until('the migration Pending', async () => (await s.kube.get(MIGRATIONS, NS, 'se-none-mig'))?.status?.phase === 'Pending', { problems: s.problems });
    assert.equal((await s.kube.list(PODS, NS, { labelSelector: `kubevirt.io/migrationJobUID=${m.metadata?.uid}` })).items.length, 0, 'no target pod');
  });
});

describe('an SELinux node\'s context', () => {
  let s: Slice;
  after(async () => s?.stop());
  test('the target pod gets the source\'s level and the migration succeeds', async () => {
    // arrange
    s = await startSlice({ nodes: 2, nodeShapes: { node01: { selinuxContext: CONTEXT }, node02: { selinuxContext: CONTEXT } } });
    await s.kube.create(VMIS, vmiManifest('se-level'));
    await running(s, 'se-level');
    assert.equal((await s.kube.get(VMIS, NS, 'se-level'))?.status?.selinuxContext, CONTEXT);
    // act
    const m = await migrate(s, 'se-level');
    // assert
    await until('the migration Succeeded', async () => (await s.kube.get(MIGRATIONS, NS, 'se-level-mig'))?.status?.phase === 'Succeeded', { problems: s.problems });
    const target = s.sandbox.apiServer.audit.query({ resource: 'pods', verb: 'create' }).find((e) => (e.object.metadata.labels as Record<string, string> | undefined)?.['kubevirt.io/migrationJobUID'] === m.metadata?.uid);
    assert.equal((target?.object.spec as { securityContext?: { seLinuxOptions?: { level?: string } } } | undefined)?.securityContext?.seLinuxOptions?.level, 's0:c5,c6');
  });
});
