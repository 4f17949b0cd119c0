/**
 * The WaitForFirstConsumer temporary pod (reference-vm-vmi-depth §4): the launcher manifest with
 * the ephemeral-provisioning annotation and a compute container that only echoes, keeping the
 * two launcher flags KubeVirt keeps.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { clusterConfigFromKubeVirt, renderLauncherPod } from '../../shared/template/index.ts';
import { renderTempPod } from '../../shared/template/render-temp-pod.ts';
import { projectRoot } from '../support/reference.ts';
import { compute, loadVmi } from './support.ts';

const fixture = (f: string, config = clusterConfigFromKubeVirt()) => loadVmi(join(projectRoot, 'test/fixtures/vmis', f), config) as VirtualMachineInstance;

describe('the WFFC temporary pod', () => {
  test('the launcher manifest, annotated, with a compute container that only echoes', () => {
    // arrange
    const config = clusterConfigFromKubeVirt();
    const vmi = fixture('containerdisk-cloudinit.yaml', config);
    // act
    const [launcher, temp] = [renderLauncherPod(vmi, config), renderTempPod(vmi, config)];
    // assert
    assert.equal(temp.metadata?.annotations?.['kubevirt.io/ephemeral-provisioning'], 'true');
    assert.deepEqual([compute(temp)?.command, compute(temp)?.args], [['/bin/bash'], ['-c', 'echo', 'bound PVCs']]);
    const { annotations: _a, ...tempMeta } = temp.metadata ?? {};
    const { annotations: _b, ...launcherMeta } = launcher.metadata ?? {};
    assert.deepEqual(tempMeta, launcherMeta, 'same generateName, labels and owner reference');
    assert.deepEqual(temp.spec?.volumes, launcher.spec?.volumes, 'the same volumes, so the scheduler binds the claims');
    assert.deepEqual(compute(temp)?.resources, compute(launcher)?.resources);
    assert.deepEqual(temp.spec?.nodeSelector, launcher.spec?.nodeSelector);
  });

  test('table: --allow-emulation and --keep-after-failure are still appended', () => {
    // arrange
    const cases: { name: string; emulation: boolean; keep: boolean; want: string[] }[] = [
      { name: 'neither', emulation: false, keep: false, want: [] },
      { name: 'emulation', emulation: true, keep: false, want: ['--allow-emulation'] },
      { name: 'both', emulation: true, keep: true, want: ['--allow-emulation', '--keep-after-failure'] },
    ];
    for (const c of cases) {
      const config = { ...clusterConfigFromKubeVirt(), useEmulation: c.emulation };
      const vmi = fixture('containerdisk-cloudinit.yaml', config);
      if (c.keep) vmi.metadata = { ...vmi.metadata, annotations: { ...vmi.metadata?.annotations, 'kubevirt.io/keep-launcher-alive-after-failure': 'true' } };
      // act
      const args = compute(renderTempPod(vmi, config))?.args ?? [];
      // assert
      assert.deepEqual(args.slice(3), c.want, c.name);
    }
  });
});
