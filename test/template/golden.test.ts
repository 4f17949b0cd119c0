import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { clusterConfigFromKubeVirt, renderLauncherPod } from '../../shared/template/index.ts';
import { NO_REFERENCE, projectRoot, referenceDir } from '../support/reference.ts';
import { loadVmi } from './support.ts';
import { validatePod } from './validate-pod.ts';

const fixtures = join(projectRoot, 'test/fixtures/vmis');
const goldens = join(projectRoot, 'test/fixtures/golden');
const update = process.env['UPDATE_GOLDEN'] === '1';
const config = clusterConfigFromKubeVirt();
/** Claims the fixtures use, so block vs filesystem and RWX are exercised. */
const pvcs = {
  'pvc-dv-root': { volumeMode: 'Block' as const },
  'data-claim': { volumeMode: 'Filesystem' as const, accessModes: ['ReadWriteMany'] },
};

describe('golden launcher pods for the project fixtures', () => {
  for (const file of readdirSync(fixtures).filter((f) => f.endsWith('.yaml')).sort()) {
    test(file, () => {
      // arrange
      const vmi = loadVmi(join(fixtures, file), config);
      assert.ok(vmi, `${file} holds a VMI or VM`);
      // act
      const pod = renderLauncherPod(vmi, config, { pvcs });
      // assert
      assert.deepEqual(validatePod(pod), [], 'the pod passes basic Kubernetes validation');
      const golden = join(goldens, file);
      if (update || !existsSync(golden)) {
        writeFileSync(golden, stringify(pod));
        if (!update) assert.fail(`wrote missing golden ${golden}; review it and run again`);
        return;
      }
      assert.deepEqual(JSON.parse(JSON.stringify(pod)), parse(readFileSync(golden, 'utf8')), `rendered pod differs from ${golden} (UPDATE_GOLDEN=1 to accept)`);
    });
  }
});

describe('every VMI/VM in KubeVirt\'s examples renders', () => {
  const ref = referenceDir();
  test('examples', { skip: ref === undefined ? NO_REFERENCE : false }, () => {
    const dir = join(ref as string, 'examples');
    let rendered = 0;
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()) {
      const vmi = loadVmi(join(dir, file), config);
      if (!vmi) continue;
      const pod = renderLauncherPod(vmi, config);
      assert.deepEqual(validatePod(pod), [], `${file}: valid pod`);
      rendered++;
    }
    assert.ok(rendered >= 25, `rendered ${rendered} examples`);
  });
});
