/**
 * The target pod's `kubevirt.io/migration-target-ready-timestamp` (functions/migration/target-ready.ts):
 * when KubeVirt's migration controller adds it, and its value as Go's `time.Time.String()` prints it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { MigrationPhase, VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../../shared/api/index.ts';
import type { PhaseResult } from '../../../functions/migration/phases.ts';
import { goTimeString, targetReadyAnnotationPatch } from '../../../functions/migration/target-ready.ts';

const KEY = 'kubevirt.io/migration-target-ready-timestamp';
const READY = '2026-12-02T07:00:05Z';

describe('goTimeString: an RFC 3339 time as Go prints it (UTC)', () => {
  const cases = [
    { name: 'whole seconds', input: '2026-12-02T07:00:05Z', want: '2026-12-02 07:00:05 +0000 UTC' },
    { name: 'fraction, trailing zeros cut', input: '2026-12-02T07:00:05.120Z', want: '2026-12-02 07:00:05.12 +0000 UTC' },
    { name: 'all-zero fraction dropped', input: '2026-12-02T07:00:05.000Z', want: '2026-12-02 07:00:05 +0000 UTC' },
    { name: 'nanoseconds kept', input: '2026-12-02T07:00:05.123456789Z', want: '2026-12-02 07:00:05.123456789 +0000 UTC' },
    { name: 'an offset is moved to UTC', input: '2026-12-02T09:00:05+02:00', want: '2026-12-02 07:00:05 +0000 UTC' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const got = goTimeString(c.input);
      // assert
      assert.equal(got, c.want, `Go's time.Time.String() of ${c.input}`);
    });
  }

  test('a value that is not RFC 3339 is refused, naming it', () => {
    // act + assert
    assert.throws(() => goTimeString('yesterday'), /not an RFC 3339 timestamp: "yesterday"/);
  });
});

describe('targetReadyAnnotationPatch: when the target pod gets the annotation', () => {
  const pod = (annotations?: Record<string, string>): V1Pod => ({ metadata: { name: 'tgt', ...(annotations && { annotations }) } });
  const mig = (phase: string, spec: Partial<VirtualMachineInstanceMigration['spec']> = {}): VirtualMachineInstanceMigration => ({ metadata: { name: 'm', uid: 'u' }, spec: { vmiName: 'v', ...spec }, status: { phase } } as VirtualMachineInstanceMigration);
  const vmi = (ready?: string): VirtualMachineInstance => ({ spec: { domain: { devices: {} } }, status: { migrationState: { migrationUid: 'u', ...(ready && { targetNodeDomainReadyTimestamp: ready }) } } } as VirtualMachineInstance);
  const addKey = [{ op: 'add', path: '/metadata/annotations/kubevirt.io~1migration-target-ready-timestamp', value: '2026-12-02 07:00:05 +0000 UTC' }];
  const stay = (m: VirtualMachineInstanceMigration) => ({ phase: (m.status?.phase ?? '') as MigrationPhase, steps: [] as MigrationPhase[] });
  const cases: ReadonlyArray<{ name: string; migration: VirtualMachineInstanceMigration; vmi: VirtualMachineInstance; pod?: V1Pod; result?: PhaseResult; want: unknown }> = [
    { name: 'Running, domain ready, not yet annotated: added', migration: mig('Running'), vmi: vmi(READY), pod: pod({ 'kubevirt.io/migrationJobName': 'm' }), want: addKey },
    { name: 'a pod without annotations: the map is added', migration: mig('Running'), vmi: vmi(READY), pod: pod(), want: [{ op: 'add', path: '/metadata/annotations', value: { [KEY]: '2026-12-02 07:00:05 +0000 UTC' } }] },
    { name: 'already annotated: nothing (never rewritten)', migration: mig('Running'), vmi: vmi(READY), pod: pod({ [KEY]: 'earlier' }), want: undefined },
    { name: 'domain not ready yet: nothing', migration: mig('Running'), vmi: vmi(), pod: pod({}), want: undefined },
    { name: 'TargetReady, staying there: nothing', migration: mig('TargetReady'), vmi: vmi(READY), pod: pod({}), want: undefined },
    { name: 'TargetReady → Running in this pass: added', migration: mig('TargetReady'), vmi: vmi(READY), pod: pod({ a: 'b' }), result: { phase: 'Running', steps: ['Running'] }, want: addKey },
    { name: 'TargetReady → Running → Succeeded in one pass: added (KubeVirt has a Running pass)', migration: mig('TargetReady'), vmi: vmi(READY), pod: pod({ a: 'b' }), result: { phase: 'Succeeded', steps: ['Running', 'Succeeded'] }, want: addKey },
    { name: 'Running, this pass fails it: nothing', migration: mig('Running'), vmi: vmi(READY), pod: pod({ a: 'b' }), result: { phase: 'Failed', steps: ['Failed'] }, want: undefined },
    { name: 'no target pod: nothing', migration: mig('Running'), vmi: vmi(READY), want: undefined },
    { name: 'decentralized source side (sendTo): nothing', migration: mig('Running', { sendTo: { migrationID: 'x', connectURL: 'y' } } as never), vmi: vmi(READY), pod: pod({}), want: undefined },
    { name: 'decentralized target side (receive): added', migration: mig('Running', { receive: { migrationID: 'x' } } as never), vmi: vmi(READY), pod: pod({ a: 'b' }), want: addKey },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const got = targetReadyAnnotationPatch(c.migration, c.vmi, c.pod, c.result ?? stay(c.migration));
      // assert
      assert.deepEqual(got, c.want);
    });
  }
});
